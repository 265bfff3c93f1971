import { routes } from '../gen/routes';
import { handlers } from '../src/api';
import { NOT_BUILT, NOT_IMPLEMENTED } from '../src/api/notImplemented';
import contract from '../gen/openapi.json';
import { startTestServer, type TestServer } from './support/harness';

// Progress made visible: exactly these operations still answer 501
// not_implemented; every other operation of the contract is built. The list
// is empty: every operation of v1 answers for real.

const STILL_501: string[] = [];

let server: TestServer;
let key: string;

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000', RATE_LIMIT_EXPORT: '100000', RATE_LIMIT_SOURCEMAPS: '100000', RATE_LIMIT_SYMBOLS: '100000' });
  key = (await server.org({ plan: 'enterprise' })).apiKey;
});
afterAll(() => server.close());

test('the 501 list is exactly the operations not built yet (none), and the contract documents their 501', () => {
  expect([...NOT_IMPLEMENTED].sort()).toEqual([...STILL_501].sort());
  expect(NOT_IMPLEMENTED).toHaveLength(0);
  for (const id of STILL_501) expect(routes.some((r) => r.operationId === id)).toBe(true);
  const documented501: string[] = [];
  for (const item of Object.values<Record<string, any>>((contract as any).paths)) {
    for (const op of Object.values<any>(item)) if (op?.responses?.['501']) documented501.push(op.operationId);
  }
  expect(documented501.sort()).toEqual([...STILL_501].sort());
  // A real handler never hides behind a 501 the contract no longer documents, nor the reverse.
  for (const r of routes) expect({ id: r.operationId, notBuilt: Boolean((handlers as any)[r.operationId][NOT_BUILT]) }).toEqual({ id: r.operationId, notBuilt: !r.built });
});

test('the index marks unbuilt operations built: false, apart from whether the key may call them', async () => {
  const index = await (await fetch(`${server.url}/api/v1`, { headers: { authorization: `Bearer ${key}` } })).json();
  for (const r of index.data.routes) expect({ id: r.operationId, built: r.built }).toEqual({ id: r.operationId, built: !STILL_501.includes(r.operationId) });
  expect(index.data.routes.find((r: { operationId: string }) => r.operationId === 'exportAll')).toMatchObject({ allowed: true, built: true });
  expect(index.data.routes.filter((r: { built: boolean }) => !r.built)).toEqual([]);
});

test('every operation answers: built ones never 501, the rest 501 not_implemented', async () => {
  const seen: Record<string, number> = {};
  for (const r of routes) {
    const path = r.path.replace(/\{(\w+)\}/g, 'x_missing');
    const res = await fetch(`${server.url}/api/v1${path === '/' ? '' : path}`, {
      method: r.method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: r.method === 'GET' ? undefined : '{}',
    });
    seen[r.operationId] = res.status;
    if (res.status === 501) expect((await res.json()).code).toBe('not_implemented');
  }
  const answered501 = Object.entries(seen).filter(([, s]) => s === 501).map(([id]) => id).sort();
  // Session-only operations refuse keys before reaching the handler.
  const sessionOnly: string[] = routes.filter((r) => r.sessionOnly).map((r) => r.operationId);
  expect(answered501).toEqual(STILL_501.filter((id) => !sessionOnly.includes(id)).sort());
  for (const id of sessionOnly) expect(seen[id]).toBe(403);
});
