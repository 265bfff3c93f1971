/**
 * Cached monitor reads (src/db/readCache.ts) never outlive a write: this
 * process's writes are seen at once, other processes' within the moment their
 * notification takes, and nothing is cached while notifications are not heard.
 */
import pg from 'pg';
import { sql } from 'kysely';
import { cascadeReach, ChangeClock, endsTransaction, tablesWritten, writesOf } from '../src/db/changes';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import { ok, until } from './support/expect';

describe('which tables a statement writes', () => {
  test.each([
    ['select * from "monitors" where "id" = $1', []],
    ['select id from monitors where next_check_at <= now() for update skip locked', []],
    ['select 1 from monitors for no key update', []],
    ['insert into "monitors" ("id", "name") values ($1, $2)', ['monitors']],
    ['insert into "incident_events" ("id") values ($1) on conflict ("id") do update set "id" = excluded."id"', ['incident_events']],
    ['update "monitors" set "name" = $1 where "id" = $2', ['monitors']],
    ['UPDATE monitors AS m SET status = v.status FROM (values ($1)) v(status)', ['monitors']],
    ['delete from "workspaces" where "id" = $1', ['workspaces']],
    ['with o as (update monitors set status = $1 returning id) insert into incidents (monitor_id) select id from o', ['monitors', 'incidents']],
    ['update only "public"."hosts" set name = $1', ['hosts']],
    ['delete from graphile_worker.jobs where id = $1', ['graphile_worker.jobs']],
    ['truncate table monitor_hosts', ['monitor_hosts']],
    ['TRUNCATE only "monitors", public.hosts RESTART IDENTITY', ['monitors', 'hosts']],
    ['truncate workspaces cascade', 'all'],
    ['begin', []],
    ['commit', []],
    ['alter table monitors add column x int', 'all'],
    ['create index on incidents (monitor_id)', 'all'],
  ])('%s', (text, expected) => {
    const got = tablesWritten(text);
    expect(Array.isArray(got) ? [...got].sort() : got).toEqual(Array.isArray(expected) ? [...expected].sort() : expected);
  });

  test('a rollback to a savepoint does not end the transaction', () => {
    expect(['commit', 'rollback', 'ROLLBACK WORK', 'end'].map(endsTransaction)).toEqual([true, true, true, true]);
    expect(['rollback to "sp"', 'ROLLBACK TO SAVEPOINT sp', 'rollback transaction to sp', 'release savepoint sp', 'savepoint sp'].map(endsTransaction))
      .toEqual([false, false, false, false, false]);
  });

  test('deletes (and key updates) reach through foreign-key actions; inserts and other updates change their own table only', () => {
    expect(writesOf('update "monitors" set "status" = $1 where "id" = $2')).toEqual({ tables: ['monitors'], deleted: [], updated: ['monitors'] });
    expect(writesOf('delete from "monitors" where "id" = $1')).toEqual({ tables: ['monitors'], deleted: ['monitors'], updated: [] });
    expect(writesOf('insert into monitors (id) values ($1)')).toEqual({ tables: ['monitors'], deleted: [], updated: [] });
    expect(writesOf('truncate monitors')).toEqual({ tables: ['monitors'], deleted: ['monitors'], updated: [] });
    expect(writesOf('truncate monitors cascade')).toBe('all');
    const clock = new ChangeClock();
    clock.configure({ onDelete: cascadeReach([{ parent: 'monitors', child: 'incidents' }]), onUpdate: new Map() }, ['monitors', 'incidents']);
    clock.live = true;
    const incidents = clock.stamp(['incidents']);
    clock.bump(['monitors'], [], ['monitors']);
    expect(clock.stamp(['incidents'])).toBe(incidents);
    clock.bump(['monitors'], ['monitors'], []);
    expect(clock.stamp(['incidents'])).not.toBe(incidents);
  });

  test('foreign-key reach is transitive', () => {
    const reach = cascadeReach([
      { parent: 'organizations', child: 'workspaces' },
      { parent: 'workspaces', child: 'monitors' },
      { parent: 'monitors', child: 'incidents' },
      { parent: 'hosts', child: 'monitor_hosts' },
      { parent: 'monitors', child: 'monitor_hosts' },
    ]);
    expect([...reach.get('organizations')!].sort()).toEqual(['incidents', 'monitor_hosts', 'monitors', 'workspaces']);
    expect(reach.get('hosts')).toEqual(['monitor_hosts']);
    expect(reach.get('incidents')).toBeUndefined();
  });
});

describe('cached monitor reads through the API', () => {
  let server: TestServer;
  let api: ApiClient;
  let workspaceId: string;
  let other: pg.Client; // another process's connection
  let id: string;

  beforeAll(async () => {
    server = await startTestServer();
    const org = await server.org();
    api = server.api(org.apiKey);
    workspaceId = org.workspaceId;
    other = new pg.Client({ connectionString: server.databaseUrl });
    await other.connect();
  });
  afterAll(async () => {
    await other.end();
    await server.close();
  });

  beforeEach(async () => {
    const m = ok('createMonitor', await api.post('/monitors', {
      name: 'Cached', kind: 'http', workspaceId, config: JSON.stringify({ url: 'https://example.com/' }),
    }), 201);
    id = m.id;
  });

  const name = async () => ok('getMonitor', await api.get(`/monitors/${id}`)).name as string;
  const listed = async () => (ok('listMonitors', await api.get('/monitors')) as { id: string; name: string }[]).find((m) => m.id === id)?.name;
  // A write no trigger reports: what a cache would keep serving if nothing else told it.
  const silentRename = async (to: string) => {
    await other.query('begin');
    await other.query('set local session_replication_role = replica');
    await other.query('update monitors set name = $1 where id = $2', [to, id]);
    await other.query('commit');
  };

  test('reads are cached: an unreported write is not seen at once', async () => {
    expect(await name()).toBe('Cached');
    expect(await listed()).toBe('Cached');
    await silentRename('Silently renamed');
    expect(await name()).toBe('Cached');
    expect(await listed()).toBe('Cached');
    // The time-to-live is a backstop: the write shows within it anyway.
    await until('the silent write shows', async () => (await name()) === 'Silently renamed', 5000);
  });

  test("this process's writes are seen by the very next read", async () => {
    expect(await name()).toBe('Cached');
    ok('updateMonitor', await api.patch(`/monitors/${id}`, { name: 'Patched' }));
    expect(await name()).toBe('Patched');
    expect(await listed()).toBe('Patched');
  });

  test("this process's transaction is seen when it commits, not before", async () => {
    expect(await name()).toBe('Cached');
    await server.db.transaction().execute(async (tx) => {
      // Triggers off: only the pool seam can tell the cache about this write.
      await sql`set local session_replication_role = replica`.execute(tx);
      await tx.updateTable('monitors').set({ name: 'In transaction' }).where('id', '=', id).execute();
      expect(await name()).toBe('Cached');
    });
    expect(await name()).toBe('In transaction');
  });

  test('a write before a savepoint that was rolled back to still counts at commit', async () => {
    expect(await name()).toBe('Cached');
    const trx = await server.db.startTransaction().execute();
    await sql`set local session_replication_role = replica`.execute(trx);
    await trx.updateTable('monitors').set({ name: 'Kept' }).where('id', '=', id).execute();
    const sp = await trx.savepoint('sp').execute();
    await sp.rollbackToSavepoint('sp').execute();
    expect(await name()).toBe('Cached');
    await trx.commit().execute();
    expect(await name()).toBe('Kept');
  });

  test('an over-long id is answered (404), not cached', async () => {
    expect((await api.get(`/monitors/${'x'.repeat(2000)}`)).status).toBe(404);
  });

  test("another process's writes are seen once their notification arrives", async () => {
    expect(await name()).toBe('Cached');
    await other.query('update monitors set name = $1 where id = $2', ['Renamed elsewhere', id]);
    await until('the other process write shows', async () => (await name()) === 'Renamed elsewhere', 1500);
    expect(await listed()).toBe('Renamed elsewhere');
  });

  test('a cascade from a delete elsewhere reaches the monitor read', async () => {
    const ws = ok('createWorkspace', await api.post('/workspaces', { name: `Doomed ${id.slice(-6)}` }), 201);
    const m = ok('createMonitor', await api.post('/monitors', {
      name: 'Doomed', kind: 'http', workspaceId: ws.id, config: JSON.stringify({ url: 'https://example.com/' }),
    }), 201);
    ok('getMonitor', await api.get(`/monitors/${m.id}`));
    await other.query('delete from workspaces where id = $1', [ws.id]);
    await until('the monitor is gone', async () => (await api.get(`/monitors/${m.id}`)).status === 404, 1500);
  });

  test('a link written elsewhere (hosts) shows on the monitor', async () => {
    const host = ok('createHost', await api.post('/hosts', { name: `db-${id.slice(-6)}` }), 201);
    expect(ok('getMonitor', await api.get(`/monitors/${id}`)).hosts).toEqual([]);
    await other.query('insert into monitor_hosts (monitor_id, host_id) values ($1, $2)', [id, host.id]);
    await until('the host link shows', async () => (ok('getMonitor', await api.get(`/monitors/${id}`)).hosts as unknown[]).length === 1, 1500);
  });

  test('nothing is cached while the change feed is down, and caching resumes when it is back', async () => {
    expect(await name()).toBe('Cached');
    await other.query("select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'vigil-change-feed' and datname = current_database()");
    // The feed notices its connection is gone (an error event); then every read goes to the database.
    await until('reads bypass the cache', async () => {
      await silentRename(`Feed down ${Date.now()}`);
      return (await name()).startsWith('Feed down');
    }, 5000);
    await silentRename('While down');
    expect(await name()).toBe('While down');
    // Reconnected (backoff 0.5 s): cached again, so an unreported write is not seen at once.
    await until('caching resumes', async () => {
      const before = await name();
      await name(); // cached now, if the feed is back
      await silentRename(`${before}!`);
      return (await name()) === before;
    }, 10_000);
  });
});

describe('the cache keeps tenancy', () => {
  let server: TestServer;
  afterAll(() => server.close());

  test('a read cached for an unconfined key is not served to a confined one, nor to another organisation', async () => {
    server = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
    const org = await server.org();
    const owner = server.api(org.apiKey);
    const other = ok('createWorkspace', await owner.post('/workspaces', { name: 'Elsewhere' }), 201).id as string;
    const create = async (workspaceId: string) => ok('createMonitor', await owner.post('/monitors', {
      name: 'M', kind: 'http', workspaceId, config: JSON.stringify({ url: 'https://example.com/' }),
    }), 201).id as string;
    const mine = await create(org.workspaceId);
    const theirs = await create(other);
    // Cached by the owner first.
    expect((ok('listMonitors', await owner.get('/monitors')) as { id: string }[]).map((m) => m.id).sort()).toEqual([mine, theirs].sort());
    ok('getMonitor', await owner.get(`/monitors/${theirs}`));
    const confined = server.api(ok('createApiKey', await owner.post('/api-keys', { name: 'c', workspaceIds: [org.workspaceId] }), 201).token);
    expect((ok('listMonitors', await confined.get('/monitors')) as { id: string }[]).map((m) => m.id)).toEqual([mine]);
    expect((await confined.get(`/monitors/${theirs}`)).status).toBe(404);
    const stranger = server.api((await server.org()).apiKey);
    expect(ok('listMonitors', await stranger.get('/monitors'))).toEqual([]);
    expect((await stranger.get(`/monitors/${mine}`)).status).toBe(404);
  });
});
