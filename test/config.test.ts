import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ConfigError, loadConfig } from '../src/config';

// A bad setting stops the start with one line naming the variable — never a
// stack trace, never the secret it was given.

const ROOT = path.resolve(__dirname, '..');

test.each([
  [{ PORT: 'eighty' }, /^PORT must be a whole number from 0 to 65535 \(got "eighty"\)$/],
  [{ PORT: '70000' }, /^PORT /],
  [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL must be one of debug, info, warn, error, silent \(got "loud"\)$/],
  [{ LOG_FORMAT: 'xml' }, /^LOG_FORMAT must be one of json, pretty/],
  [{ DATABASE_URL: 'mysql://root@db/vigil' }, /^DATABASE_URL must be a postgres:\/\/ URL/],
  [{ DATABASE_URL: 'not a url' }, /^DATABASE_URL /],
  [{ MASTER_KEY: 'c2hvcnQ=' }, /^MASTER_KEY must be the base64 encoding of 32 bytes/],
  [{ REDIS_URL: 'http://cache:6379' }, /^REDIS_URL /],
  [{ RATE_LIMIT_STORE: 'redis' }, /^RATE_LIMIT_STORE is redis but REDIS_URL is not set$/],
  [{ WORKER: 'maybe' }, /^WORKER must be true or false/],
  [{ CHECK_CONCURRENCY: '0' }, /^CHECK_CONCURRENCY /],
  [{ BASE_URL: 'vigil.example.com' }, /^BASE_URL must be an http:\/\/ or https:\/\/ URL/],
  [{ DNS_RESOLVER: 'dns.google' }, /^DNS_RESOLVER must be an IP address/],
  [{ BOOTSTRAP_PLAN: 'platinum' }, /^BOOTSTRAP_PLAN must be one of free, pro, business, enterprise/],
  [{ SHUTDOWN_TIMEOUT: '-1' }, /^SHUTDOWN_TIMEOUT /],
  [{ TRUST_PROXY: 'my-proxy' }, /^TRUST_PROXY must be true, false, a number of hops/],
])('%j is refused, naming the variable', (env, message) => {
  expect(() => loadConfig(env)).toThrow(ConfigError);
  expect(() => loadConfig(env)).toThrow(message);
});

test('secret values are never quoted back', () => {
  for (const env of [{ MASTER_KEY: 'hunter2-not-a-key' }, { DATABASE_URL: 'mysql://u:pw-7a1@db/x' }, { SMTP_URL: 'http://u:pw-7a1@mail' }]) {
    try {
      loadConfig(env);
      throw new Error('accepted');
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect((e as Error).message).not.toMatch(/hunter2|pw-7a1/);
    }
  }
});

test('the defaults and good values load', () => {
  const c = loadConfig({ PORT: '9000', LOG_LEVEL: 'DEBUG', WORKER: 'no', DATABASE_URL: 'postgresql://u@h:5432/d', MASTER_KEY: Buffer.alloc(32, 1).toString('base64'), DNS_RESOLVER: '[::1]:5353' });
  expect(c).toMatchObject({ port: 9000, logLevel: 'debug', worker: false, databaseUrl: 'postgresql://u@h:5432/d', dnsResolver: '[::1]:5353', shutdownTimeoutMs: 25_000, metricsToken: null });
  expect(loadConfig({})).toMatchObject({ port: 8080, host: '0.0.0.0', logLevel: 'info', logFormat: null, worker: true, rateLimitStore: 'memory', trustProxy: false });
  expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
  expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8' }).trustProxy).toEqual(['loopback', '10.0.0.0/8']);
});

test.each(['src/main.ts', 'src/worker-main.ts'])('%s exits 2 with one line, no stack trace', (script) => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: ROOT, env: { ...process.env, PORT: 'abc', MASTER_KEY: 'x' }, encoding: 'utf8', timeout: 30_000 });
  expect(r.status).toBe(2);
  const out = `${r.stdout}${r.stderr}`.trim().split('\n');
  expect(out).toHaveLength(1);
  expect(out[0]).toMatch(/failed to start: invalid configuration: (PORT|MASTER_KEY) /);
  expect(out[0]).not.toMatch(/\bat \S+:\d+/);
});
