import { connectDb, type Db } from '../src/db/connect';
import { addMember, createOrganization } from '../src/domain/organizations';
import { ApiClient, freshDatabase } from './support/harness';
import { startChild, type ChildServer } from './support/child';

// Issue 25, item 3: removing a person revokes their keys "in the same
// operation" (spec, Authentication rule 4), and a demotion narrows them at
// once — on every process, not only on the one that made the change. Two
// Vigil processes share one database: the change is made on A, and the very
// next request on B must see it (B has just served the same key, so any
// per-process cache of callers would still hold it).

const ROUNDS = 4;

let a: ChildServer;
let b: ChildServer;
let db: Db;
let drop: () => Promise<void>;
let org: { organizationId: string; apiKey: string };

beforeAll(async () => {
  const database = await freshDatabase();
  drop = database.drop;
  const env = {
    DATABASE_URL: database.url, WORKER: 'false', RATE_LIMIT_STORE: 'memory', RATE_LIMIT_READ: '1000000', RATE_LIMIT_WRITE: '1000000',
    MASTER_KEY: Buffer.alloc(32, 3).toString('base64'),
  };
  // One after the other: the first migrates and bootstraps, the second finds it done.
  a = await startChild(env);
  b = await startChild(env);
  db = connectDb(database.url, 2).db;
  org = await createOrganization(db, { name: 'Cross', ownerEmail: `owner-${Date.now()}@example.test`, plan: 'enterprise' });
}, 120_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await db?.destroy();
  await drop?.();
});

const on = (server: ChildServer, key: string) => new ApiClient(server.url, key);

test('a member removed on A is 401 on B at once, and GET /me on B never answers 500 meanwhile', async () => {
  for (let round = 0; round < ROUNDS; round++) {
    const m = await addMember(db, { organizationId: org.organizationId, email: `gone-${round}-${Date.now()}@example.test`, role: 'member' });
    const onB = on(b, m.apiKey);
    expect((await onB.get('/me')).status).toBe(200);
    expect((await onB.get('/monitors')).status).toBe(200);
    // B keeps describing the member while A removes it: each answer is 200 (before) or 401 (after), never 500.
    let removed = false;
    const seen: number[] = [];
    const poll = (async () => {
      while (!removed) seen.push((await onB.get('/me')).status);
    })();
    const removal = await on(a, org.apiKey).delete(`/members/${m.membershipId}`);
    expect(removal.status).toBe(200);
    removed = true;
    await poll;
    // The very next requests on B, after A answered: the key is gone everywhere.
    const me = await onB.get('/me');
    expect(me.status).toBe(401);
    expect(me.body.code).toBe('unauthorized');
    expect((await onB.get('/monitors')).status).toBe(401);
    expect((await on(a, m.apiKey).get('/me')).status).toBe(401);
    expect(seen.filter((s) => s !== 200 && s !== 401)).toEqual([]);
  }
}, 120_000);

test('a member demoted to viewer on A is refused a write on B at once (403 naming the permission)', async () => {
  for (let round = 0; round < ROUNDS; round++) {
    const m = await addMember(db, { organizationId: org.organizationId, email: `demoted-${round}-${Date.now()}@example.test`, role: 'member' });
    const onB = on(b, m.apiKey);
    expect((await onB.post('/hosts', { name: `before-${round}.example.test` })).status).toBe(201);
    expect((await on(a, org.apiKey).patch(`/members/${m.membershipId}`, { role: 'viewer' })).status).toBe(200);
    const refused = await onB.post('/hosts', { name: `after-${round}.example.test` });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'forbidden', vars: { permission: 'monitor:create' } });
    // Reads stay allowed, with the new role described.
    const me = await onB.get('/me');
    expect(me.status).toBe(200);
    expect(me.body.data.membership.role).toBe('viewer');
  }
}, 120_000);

test('a key revoked on A is 401 on B at once', async () => {
  const m = await addMember(db, { organizationId: org.organizationId, email: `revoked-${Date.now()}@example.test`, role: 'admin' });
  const minted = await on(a, m.apiKey).post('/api-keys', { name: 'short-lived' });
  expect(minted.status).toBe(201);
  const onB = on(b, minted.body.data.token);
  expect((await onB.get('/me')).status).toBe(200);
  expect((await on(a, m.apiKey).delete(`/api-keys?id=${minted.body.data.id}`)).status).toBe(200);
  expect((await onB.get('/me')).status).toBe(401);
}, 60_000);
