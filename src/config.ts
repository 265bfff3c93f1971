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
  limits: { read: number; write: number; export: number; sourcemaps: number; symbols: number };
  /** Plan given to the organisation created on the first start of an empty database. */
  bootstrapPlan: string;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** Checks may reach loopback and private addresses (self-hosted default); false for multi-tenant hosting. */
  checksAllowPrivate: boolean;
  /** PEM files of extra CAs that checks trust (e.g. an internal CA). */
  checksExtraCaFiles: string[];
  /** Run the worker (scheduler and checks) in this process. */
  worker: boolean;
  /** How many checks one worker runs at once. */
  checkConcurrency: number;
  /** DNS resolver (`ip` or `ip:port`) of Vigil's own lookups (custom-domain verification); null = the system's. */
  dnsResolver: string | null;
  /** Alert providers: SMTP for e-mail, Telegram bot, PagerDuty and JSM endpoints (configurable for tests and proxies). */
  providers: {
    smtpUrl: string | null;
    mailFrom: string;
    telegramApiUrl: string;
    telegramBotToken: string | null;
    pagerdutyEventsUrl: string;
    jsmApiUrl: string;
  };
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
}

/** Reads the configuration from `env` (defaults documented in the README table). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const databaseUrl = env.DATABASE_URL || null;
  const redisUrl = env.REDIS_URL || null;
  const store = (env.RATE_LIMIT_STORE || (redisUrl ? 'redis' : databaseUrl ? 'postgres' : 'memory')) as RateLimitStore;
  if (!['memory', 'postgres', 'redis'].includes(store)) throw new Error(`RATE_LIMIT_STORE must be memory, postgres or redis, got "${store}"`);
  if (store === 'redis' && !redisUrl) throw new Error('RATE_LIMIT_STORE=redis needs REDIS_URL');
  const level = (env.LOG_LEVEL || 'info') as Config['logLevel'];
  return {
    port: int(env, 'PORT', 8080),
    host: env.HOST || '0.0.0.0',
    baseUrl: env.BASE_URL ? env.BASE_URL.replace(/\/+$/, '') : null,
    databaseUrl,
    dataDir: path.resolve(env.DATA_DIR || './data'),
    masterKey: env.MASTER_KEY || null,
    redisUrl,
    rateLimitStore: store,
    limits: {
      read: int(env, 'RATE_LIMIT_READ', 120),
      write: int(env, 'RATE_LIMIT_WRITE', 30),
      export: int(env, 'RATE_LIMIT_EXPORT', 6),
      sourcemaps: int(env, 'RATE_LIMIT_SOURCEMAPS', 300),
      symbols: int(env, 'RATE_LIMIT_SYMBOLS', 20),
    },
    bootstrapPlan: env.BOOTSTRAP_PLAN || 'enterprise',
    logLevel: level,
    checksAllowPrivate: !['false', '0', 'no'].includes((env.CHECKS_ALLOW_PRIVATE ?? 'true').toLowerCase()),
    checksExtraCaFiles: (env.CHECKS_EXTRA_CA_FILES ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    worker: !['false', '0', 'no'].includes((env.WORKER ?? 'true').toLowerCase()),
    checkConcurrency: int(env, 'CHECK_CONCURRENCY', 200),
    dnsResolver: env.DNS_RESOLVER || null,
    providers: {
      smtpUrl: env.SMTP_URL || null,
      mailFrom: env.MAIL_FROM || 'Vigil <vigil@localhost>',
      telegramApiUrl: (env.TELEGRAM_API_URL || 'https://api.telegram.org').replace(/\/+$/, ''),
      telegramBotToken: env.TELEGRAM_BOT_TOKEN || null,
      pagerdutyEventsUrl: env.PAGERDUTY_EVENTS_URL || 'https://events.pagerduty.com/v2/enqueue',
      jsmApiUrl: (env.JSM_API_URL || 'https://api.atlassian.com/jsm/ops/integration/v2/alerts').replace(/\/+$/, ''),
    },
  };
}
