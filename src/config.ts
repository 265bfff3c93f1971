import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/** Where rate-limit counters live; see README "Configuration". */
export type RateLimitStore = 'memory' | 'postgres' | 'redis';

/** Process configuration, read once from the environment. */
export interface Config {
  port: number;
  host: string;
  /** Public base URL used in links (ping URLs, MCP address); derived from the listen address when unset. */
  baseUrl: string | null;
  /** External PostgreSQL; null means the embedded server under dataDir. */
  databaseUrl: string | null;
  dataDir: string;
  /** 32-byte master key (base64) for secrets at rest; generated into dataDir when unset. */
  masterKey: string | null;
  redisUrl: string | null;
  rateLimitStore: RateLimitStore;
  /** Per-organisation limits; overridable for benchmarks and load tests only. */
  limits: { read: number; write: number; export: number; sourcemaps: number; symbols: number; errorsPerProject: number; errorsPerOrganization: number; analyticsPerSite: number };
  /** Plan given to the organisation created on the first start of an empty database. */
  bootstrapPlan: string;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** `json` lines, or `pretty` for people; null = pretty on a terminal, else JSON. */
  logFormat: 'json' | 'pretty' | null;
  /** Bearer token `/metrics` asks for; null = open (keep it off the public network). */
  metricsToken: string | null;
  /** How long a SIGTERM may take: in-flight requests, running checks and jobs get this long to finish. */
  shutdownTimeoutMs: number;
  /** The event stream (src/stream/): seconds between keep-alive comments, and open streams per organisation in one process. */
  stream: { heartbeatSeconds: number; maxPerOrganization: number };
  /**
   * Which proxies in front of Vigil to believe about the client's address
   * (X-Forwarded-For), as Express's `trust proxy`: false (none), a number of
   * hops, or addresses/subnets (`loopback`, `10.0.0.0/8`). Rate limits by
   * client address (sign-in, password pages, sign-up) count real clients only
   * then, and web analytics hashes and locates the real visitor.
   */
  trustProxy: boolean | number | string[];
  /** Self-service sign-up (POST /api/v1/signup): `open`, or `closed` (the default: people join by invitation). */
  signup: 'open' | 'closed';
  /** The App Store Server API (in-app purchases); null when not configured. */
  appStore: {
    bundleId: string; appAppleId: number | null; issuerId: string; keyId: string; privateKey: string;
    environment: 'Production' | 'Sandbox'; rootCertificates: Buffer[]; apiUrl: string | null; onlineChecks: boolean;
    /** Product id → `plan:cadence`. */
    products: Record<string, string>;
  } | null;
  /** Stripe (web checkout and its webhook); null when not configured. */
  stripe: { secretKey: string; webhookSecret: string; apiUrl: string; prices: Record<string, string> } | null;
  /** Checks may reach loopback and private addresses (self-hosted default); false for multi-tenant hosting. */
  checksAllowPrivate: boolean;
  /** PEM files of extra CAs that checks trust (e.g. an internal CA). */
  checksExtraCaFiles: string[];
  /** Run the worker (scheduler and checks) in this process. */
  worker: boolean;
  /** How many checks one worker runs at once. */
  checkConcurrency: number;
  /** Traffic alerting: a site whose usual for an hour is below this many pageviews is never alerted (docs/analytics.md). */
  trafficAlertMinPageviews: number;
  /** DNS resolver (`ip` or `ip:port`) of Vigil's own lookups (custom-domain verification); null = the system's. */
  dnsResolver: string | null;
  /** Alert providers: SMTP for e-mail, Telegram bot, PagerDuty and JSM endpoints (configurable for tests and proxies). */
  providers: {
    smtpUrl: string | null;
    mailFrom: string;
    telegramApiUrl: string;
    telegramBotToken: string | null;
    /** A Twilio-compatible SMS API (`{url}/Accounts/{sid}/Messages.json`); SMS is off unless sid, token and sender are set. */
    smsUrl: string;
    smsAccountSid: string | null;
    smsAuthToken: string | null;
    smsFrom: string | null;
    pagerdutyEventsUrl: string;
    jsmApiUrl: string;
  };
}

/**
 * A configuration value that cannot be used. `main` prints its message as the
 * one line of a failed start (it names the variable), never a stack trace.
 */
export class ConfigError extends Error {
  constructor(readonly variable: string, problem: string, raw?: string) {
    super(`${variable} ${problem}${raw === undefined ? '' : ` (got "${raw.length > 60 ? `${raw.slice(0, 60)}…` : raw}")`}`);
    this.name = 'ConfigError';
  }
}

/** Variables whose values are secrets: a refusal never quotes them. */
const SECRET = new Set(['MASTER_KEY', 'DATABASE_URL', 'REDIS_URL', 'SMTP_URL', 'TELEGRAM_BOT_TOKEN', 'METRICS_TOKEN', 'SMS_AUTH_TOKEN', 'STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET']);

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new ConfigError(name, `must be a whole number from ${min} to ${max}`, raw);
  return n;
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = raw.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(name, 'must be true or false', raw);
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = raw.trim().toLowerCase() as T;
  if (!allowed.includes(v)) throw new ConfigError(name, `must be one of ${allowed.join(', ')}`, raw);
  return v;
}

/** A URL with one of `schemes`, or null when unset. Secret URLs are never quoted back. */
function url(env: NodeJS.ProcessEnv, name: string, schemes: string[], what: string): string | null {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return null;
  const quoted = SECRET.has(name) ? undefined : raw;
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw new ConfigError(name, `must be ${what}`, quoted);
  }
  if (!schemes.includes(u.protocol.replace(/:$/, '')) || !u.hostname) throw new ConfigError(name, `must be ${what}`, quoted);
  return raw.trim();
}

function masterKey(env: NodeJS.ProcessEnv): string | null {
  const raw = env.MASTER_KEY?.trim();
  if (!raw) return null;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(raw) || Buffer.from(raw, 'base64').length !== 32) {
    throw new ConfigError('MASTER_KEY', 'must be the base64 encoding of 32 bytes (openssl rand -base64 32)');
  }
  return raw;
}

/**
 * Stripe: STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET together (or neither),
 * STRIPE_PRICES as `plan:cadence=price_id` pairs (`pro:monthly=price_…,
 * addon:monthly=price_…`), STRIPE_API_URL for a proxy or a local fake.
 */
function stripeConfig(env: NodeJS.ProcessEnv): Config['stripe'] {
  const secretKey = env.STRIPE_SECRET_KEY?.trim();
  const webhookSecret = env.STRIPE_WEBHOOK_SECRET?.trim();
  if (!secretKey && !webhookSecret) return null;
  if (!secretKey) throw new ConfigError('STRIPE_SECRET_KEY', 'must be set with STRIPE_WEBHOOK_SECRET');
  if (!webhookSecret) throw new ConfigError('STRIPE_WEBHOOK_SECRET', 'must be set with STRIPE_SECRET_KEY');
  const prices: Record<string, string> = {};
  for (const pair of (env.STRIPE_PRICES ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^(pro|business|addon):(monthly|yearly)=(\S+)$/.exec(pair);
    if (!m) throw new ConfigError('STRIPE_PRICES', 'must be plan:cadence=price_id pairs, comma-separated (pro|business|addon, monthly|yearly)', pair);
    prices[`${m[1]}:${m[2]}`] = m[3];
  }
  const apiUrl = url(env, 'STRIPE_API_URL', ['http', 'https'], 'an http(s) URL') ?? 'https://api.stripe.com';
  return { secretKey, webhookSecret, apiUrl, prices };
}

/**
 * The App Store Server API: APP_STORE_BUNDLE_ID turns it on, and then the
 * key (APP_STORE_ISSUER_ID, APP_STORE_KEY_ID, APP_STORE_PRIVATE_KEY_FILE: the
 * .p8), Apple's root certificates (APP_STORE_ROOT_CERTS: comma-separated PEM
 * or DER files) and the products (APP_STORE_PRODUCTS: `product_id=plan:cadence`
 * pairs) are required.
 */
function appStoreConfig(env: NodeJS.ProcessEnv): Config['appStore'] {
  const bundleId = env.APP_STORE_BUNDLE_ID?.trim();
  if (!bundleId) return null;
  const need = (name: string) => {
    const v = env[name]?.trim();
    if (!v) throw new ConfigError(name, 'must be set with APP_STORE_BUNDLE_ID');
    return v;
  };
  const readFile = (name: string, file: string) => {
    try {
      return fs.readFileSync(file);
    } catch {
      throw new ConfigError(name, 'names a file that cannot be read', file);
    }
  };
  const privateKey = readFile('APP_STORE_PRIVATE_KEY_FILE', need('APP_STORE_PRIVATE_KEY_FILE')).toString('utf8');
  const rootCertificates = need('APP_STORE_ROOT_CERTS').split(',').map((f) => f.trim()).filter(Boolean).map((f) => {
    const raw = readFile('APP_STORE_ROOT_CERTS', f);
    // The verifier takes DER; PEM files are converted.
    const pem = /-----BEGIN CERTIFICATE-----([\s\S]+?)-----END CERTIFICATE-----/.exec(raw.toString('latin1'));
    return pem ? Buffer.from(pem[1].replace(/\s+/g, ''), 'base64') : raw;
  });
  const products: Record<string, string> = {};
  for (const pair of need('APP_STORE_PRODUCTS').split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^([\w.-]+)=(pro|business):(monthly|yearly)$/.exec(pair);
    if (!m) throw new ConfigError('APP_STORE_PRODUCTS', 'must be product_id=plan:cadence pairs, comma-separated', pair);
    products[m[1]] = `${m[2]}:${m[3]}`;
  }
  const environment = oneOf(env, 'APP_STORE_ENVIRONMENT', ['production', 'sandbox'] as const, 'production') === 'production' ? 'Production' : 'Sandbox';
  const appId = env.APP_STORE_APP_ID?.trim();
  if (environment === 'Production' && !appId) throw new ConfigError('APP_STORE_APP_ID', 'must be set in the production environment');
  return {
    bundleId, appAppleId: appId ? int(env, 'APP_STORE_APP_ID', 0) : null, issuerId: need('APP_STORE_ISSUER_ID'), keyId: need('APP_STORE_KEY_ID'),
    privateKey, environment, rootCertificates, apiUrl: url(env, 'APP_STORE_API_URL', ['http', 'https'], 'an http(s) URL'),
    onlineChecks: bool(env, 'APP_STORE_ONLINE_CHECKS', true), products,
  };
}

function trustProxy(env: NodeJS.ProcessEnv): Config['trustProxy'] {
  const raw = env.TRUST_PROXY?.trim();
  if (!raw || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const list = raw.split(',').map((s) => s.trim()).filter(Boolean);
  const ok = list.every((s) => ['loopback', 'linklocal', 'uniquelocal'].includes(s) || net.isIP(s.split('/')[0]) !== 0);
  if (!ok) throw new ConfigError('TRUST_PROXY', 'must be true, false, a number of hops, or addresses and subnets (loopback, 10.0.0.0/8)', raw);
  return list;
}

function dnsResolver(env: NodeJS.ProcessEnv): string | null {
  const raw = env.DNS_RESOLVER?.trim();
  if (!raw) return null;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(raw);
  const v4port = /^([\d.]+):(\d+)$/.exec(raw);
  const host = bracketed?.[1] ?? v4port?.[1] ?? raw;
  const port = Number(bracketed?.[2] ?? v4port?.[2] ?? 53);
  if (net.isIP(host) === 0 || !Number.isInteger(port) || port < 1 || port > 65535) throw new ConfigError('DNS_RESOLVER', 'must be an IP address with an optional port (1.1.1.1, 10.0.0.2:5353, [::1]:53)', raw);
  return raw;
}

/**
 * Reads the configuration from `env` (defaults documented in the README
 * table). Every value is checked here, so a bad one stops the start with a
 * ConfigError naming the variable instead of failing later.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres', 'postgresql'], 'a postgres:// URL (postgres://user:password@host:5432/database)');
  const redisUrl = url(env, 'REDIS_URL', ['redis', 'rediss'], 'a redis:// or rediss:// URL');
  const store = oneOf<RateLimitStore>(env, 'RATE_LIMIT_STORE', ['memory', 'postgres', 'redis'], redisUrl ? 'redis' : databaseUrl ? 'postgres' : 'memory');
  if (store === 'redis' && !redisUrl) throw new ConfigError('RATE_LIMIT_STORE', 'is redis but REDIS_URL is not set');
  const baseUrl = url(env, 'BASE_URL', ['http', 'https'], 'an http:// or https:// URL');
  const host = env.HOST?.trim() || '0.0.0.0';
  if (/[\s/]/.test(host)) throw new ConfigError('HOST', 'must be an address or host name to listen on', env.HOST);
  const mailFrom = env.MAIL_FROM?.trim() || 'Vigil <vigil@localhost>';
  if (!/@/.test(mailFrom)) throw new ConfigError('MAIL_FROM', 'must be an e-mail address, optionally with a name (Vigil <vigil@example.com>)', env.MAIL_FROM);
  const format = oneOf(env, 'LOG_FORMAT', ['json', 'pretty'] as const, 'json');
  return {
    port: int(env, 'PORT', 8080, 0, 65535),
    host,
    baseUrl: baseUrl ? baseUrl.replace(/\/+$/, '') : null,
    databaseUrl,
    dataDir: path.resolve(env.DATA_DIR || './data'),
    masterKey: masterKey(env),
    redisUrl,
    rateLimitStore: store,
    limits: {
      read: int(env, 'RATE_LIMIT_READ', 120, 1),
      write: int(env, 'RATE_LIMIT_WRITE', 30, 1),
      export: int(env, 'RATE_LIMIT_EXPORT', 6, 1),
      sourcemaps: int(env, 'RATE_LIMIT_SOURCEMAPS', 300, 1),
      symbols: int(env, 'RATE_LIMIT_SYMBOLS', 20, 1),
      errorsPerProject: int(env, 'ERRORS_PER_PROJECT_PER_MINUTE', 6000, 1),
      analyticsPerSite: int(env, 'ANALYTICS_EVENTS_PER_SITE_PER_MINUTE', 120000, 1),
      errorsPerOrganization: int(env, 'ERRORS_PER_ORGANIZATION_PER_HOUR', 100_000, 1),
    },
    bootstrapPlan: oneOf(env, 'BOOTSTRAP_PLAN', ['free', 'pro', 'business', 'enterprise'], 'enterprise'),
    logLevel: oneOf(env, 'LOG_LEVEL', ['debug', 'info', 'warn', 'error', 'silent'] as const, 'info'),
    logFormat: env.LOG_FORMAT ? format : null,
    metricsToken: env.METRICS_TOKEN?.trim() || null,
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT', 25, 1, 3600) * 1000,
    stream: { heartbeatSeconds: int(env, 'STREAM_HEARTBEAT_SECONDS', 20, 1, 300), maxPerOrganization: int(env, 'STREAM_MAX_PER_ORGANIZATION', 50, 1) },
    signup: oneOf(env, 'SIGNUP', ['open', 'closed'] as const, 'closed'),
    trustProxy: trustProxy(env),
    stripe: stripeConfig(env),
    appStore: appStoreConfig(env),
    checksAllowPrivate: bool(env, 'CHECKS_ALLOW_PRIVATE', true),
    checksExtraCaFiles: (env.CHECKS_EXTRA_CA_FILES ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    worker: bool(env, 'WORKER', true),
    checkConcurrency: int(env, 'CHECK_CONCURRENCY', 200, 1, 100_000),
    trafficAlertMinPageviews: int(env, 'TRAFFIC_ALERT_MIN_PAGEVIEWS', 20, 1),
    dnsResolver: dnsResolver(env),
    providers: {
      smtpUrl: url(env, 'SMTP_URL', ['smtp', 'smtps'], 'an smtp:// or smtps:// URL'),
      mailFrom,
      telegramApiUrl: (url(env, 'TELEGRAM_API_URL', ['http', 'https'], 'an http(s) URL') || 'https://api.telegram.org').replace(/\/+$/, ''),
      telegramBotToken: env.TELEGRAM_BOT_TOKEN || null,
      smsUrl: (url(env, 'SMS_PROVIDER_URL', ['http', 'https'], 'an http(s) URL') || 'https://api.twilio.com/2010-04-01').replace(/\/+$/, ''),
      smsAccountSid: env.SMS_ACCOUNT_SID?.trim() || null,
      smsAuthToken: env.SMS_AUTH_TOKEN?.trim() || null,
      smsFrom: env.SMS_FROM?.trim() || null,
      pagerdutyEventsUrl: url(env, 'PAGERDUTY_EVENTS_URL', ['http', 'https'], 'an http(s) URL') || 'https://events.pagerduty.com/v2/enqueue',
      jsmApiUrl: (url(env, 'JSM_API_URL', ['http', 'https'], 'an http(s) URL') || 'https://api.atlassian.com/jsm/ops/integration/v2/alerts').replace(/\/+$/, ''),
    },
  };
}
