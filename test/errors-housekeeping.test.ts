import { sql } from 'kysely';
import { errorsHousekeeping } from '../src/errors/housekeeping';
import { ok, until } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';

// Stored error events last as long as the plan keeps history; each issue's
// latest event stays (it is the issue's lastEvent), as do the issue and its
// totals.

let server: TestServer;
let api: ApiClient;
let workspaceId: string;
let organizationId: string;

beforeAll(async () => {
  server = await startTestServer({ WORKER: 'true', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  const org = await server.org({ plan: 'free' });
  api = server.api(org.apiKey);
  workspaceId = org.workspaceId;
  organizationId = org.organizationId;
});
afterAll(async () => { await server.close(); });

const thrown = (type: string, n: number) => ({
  platform: 'node', message: `${type} ${n}`,
  exception: { values: [{ type, value: `failure ${n}`, stacktrace: { frames: [{ filename: '/app/a.js', function: type.toLowerCase(), lineno: 1, in_app: true }] } }] },
});

test('events past the plan retention go, except each issue\'s latest; younger events, issues and totals stay', async () => {
  const p = ok('createErrorProject', await api.post('/errors/projects', { name: 'Old', workspaceId }), 201) as { id: string; ref: number; publicKey: string };
  const send = async (events: object[]) => {
    const body = ['{}', ...events.flatMap((e) => ['{"type":"event"}', JSON.stringify(e)])].join('\n');
    expect((await fetch(`${server.url}/api/${p.ref}/envelope/?sentry_key=${p.publicKey}`, { method: 'POST', body })).status).toBe(200);
  };
  await send([thrown('TypeError', 1), thrown('TypeError', 2), thrown('TypeError', 3), thrown('RangeError', 1), thrown('RangeError', 2)]);
  const issues = async () => ok('listErrorIssues', await api.get(`/errors/issues?project=${p.id}&status=all`)) as { id: string; type: string; timesSeen: number }[];
  await until('five events grouped', async () => (await issues()).reduce((a, i) => a + i.timesSeen, 0) === 5, 20_000);

  const { days } = await server.db.selectFrom('plans').innerJoin('organizations', 'organizations.plan', 'plans.code')
    .select('plans.history_retention_days as days').where('organizations.id', '=', organizationId).executeTakeFirstOrThrow();
  const old = sql`now() - make_interval(days => ${days + 1})`;
  await sql`update error_events set received_at = ${old} where project_id = ${p.id}`.execute(server.db);
  await sql`update error_issue_hours set hour = date_trunc('hour', ${old}) where issue_id in (select id from error_issues where project_id = ${p.id})`.execute(server.db);
  // One event inside the retention.
  await send([thrown('TypeError', 4)]);
  await until('the sixth event grouped', async () => (await issues()).reduce((a, i) => a + i.timesSeen, 0) === 6, 20_000);

  expect(await errorsHousekeeping(server.db)).toBe(4);
  const left = await server.db.selectFrom('error_events').select(['seq', 'payload']).where('project_id', '=', p.id).orderBy('seq').execute();
  // RangeError's latest (old, but its issue's lastEvent) and TypeError 4 (young, and its issue's latest).
  expect(left.map((e) => JSON.parse(e.payload).message)).toEqual(['RangeError 2', 'TypeError 4']);
  const after = await issues();
  expect(after.map((i) => [i.type, i.timesSeen]).sort()).toEqual([['RangeError', 2], ['TypeError', 4]]);
  for (const i of after) {
    const detail = ok('getErrorIssue', await api.get(`/errors/issues/${i.id}`)) as { lastEvent: unknown };
    expect(detail.lastEvent).toBeTruthy();
  }
  const hours = await server.db.selectFrom('error_issue_hours').select('count').where('issue_id', 'in', after.map((i) => i.id)).execute();
  expect(hours.map((h) => h.count)).toEqual([1]);
  // Nothing left to do.
  expect(await errorsHousekeeping(server.db)).toBe(0);
});
