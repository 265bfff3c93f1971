/**
 * Text from the outside world (a server's answer, a probe's report) cannot sink
 * a batch of results: NUL bytes and lone surrogates are made storable, odd
 * numbers and readings are dropped; and input that would carry them into
 * results is refused where it enters (monitor config).
 */
import { claimDue } from '../src/engine/claim';
import { writeResults } from '../src/engine/results';
import type { CheckResult } from '../src/engine/kinds/kind';
import { ok } from './support/expect';
import { makeDue } from './support/monitors';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';

let server: TestServer;
let api: ApiClient;
let org: { organizationId: string; workspaceId: string; apiKey: string };
beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_WRITE: '1000', RATE_LIMIT_READ: '1000' });
  org = await server.org({ plan: 'enterprise' });
  api = server.api(org.apiKey);
});
afterAll(() => server.close());

test('a config carrying NUL or a lone surrogate (escaped inside the JSON string) is 400 naming the config field', async () => {
  for (const [config, field] of [['{"host":"a\\u0000b","port":80}', 'config.host'], ['{"host":"a\\ud800b","port":80}', 'config.host']]) {
    const res = await api.post('/monitors', { name: 'p', kind: 'tcp', workspaceId: org.workspaceId, config });
    expect(res).toMatchObject({ status: 400, body: { code: 'invalid_config', details: { field } } });
  }
});

test('one result with NUL, lone surrogates, Infinity and odd readings is stored cleaned, and the batch with it too', async () => {
  const ids: string[] = [];
  for (const name of ['odd', 'healthy']) {
    ids.push(ok('createMonitor', await api.post('/monitors', {
      name, kind: 'http', workspaceId: org.workspaceId, config: JSON.stringify({ url: 'https://example.com/' }),
    }), 201).id);
  }
  await makeDue(server.db, ids);
  const claimed = (await claimDue(server.db, 50, null)).filter((m) => ids.includes(m.id));
  expect(claimed).toHaveLength(2);
  const at = new Date();
  await writeResults(server.db, claimed.map((m) => ({
    monitor: m, at, nextDueAt: new Date(Date.now() + 60_000),
    result: (m.name === 'odd'
      ? { outcome: 'down' as const, cause: 'http_status', message: 'Server said a\u0000b \ud800', responseTimeMs: Infinity,
        detail: { readings: 0 as never, note: 'x\u0000y', ['k\udc00']: ['\ud800'] } as never }
      : { outcome: 'up' as const, cause: null, message: 'OK', responseTimeMs: 12 }) as CheckResult,
  })));
  const rows = await server.db.selectFrom('monitors').select(['id', 'name', 'last_message', 'last_response_time_ms', 'last_checked_at']).where('id', 'in', ids).execute();
  for (const r of rows) expect(r.last_checked_at).not.toBeNull();
  const odd = rows.find((r) => r.name === 'odd')!;
  expect(odd.last_message).toBe('Server said a\ufffdb \ufffd');
  expect(odd.last_response_time_ms).toBeNull();
  expect(rows.find((r) => r.name === 'healthy')!.last_response_time_ms).toBe(12);
});

test('an http URL a check could never send to is 400 on config.url', async () => {
  for (const url of ['http://[::1', 'http://example.com:99999/', 'http://example.com:0/']) {
    const res = await api.post('/monitors', { name: 'u', kind: 'http', workspaceId: org.workspaceId, config: JSON.stringify({ url }) });
    expect(res).toMatchObject({ status: 400, body: { code: 'invalid_config', details: { field: 'config.url' } } });
  }
  ok('createMonitor', await api.post('/monitors', { name: 'u', kind: 'http', workspaceId: org.workspaceId, config: JSON.stringify({ url: 'http://example.com:8080/x' }) }), 201);
});
