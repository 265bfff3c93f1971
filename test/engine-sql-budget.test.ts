/**
 * The engine's database work per check, as a budget that fails on regressions
 * (issue 29): N HTTP monitors are checked by the real worker against a local
 * target, and in a steady-state round (every monitor checked once more after
 * a first round made partitions, plans and roll-up rows) the statements the
 * worker sends and the rows they write are counted at the database layer (each
 * pg client's `query`). Nothing is timed: the figures are counts, the same on
 * a loaded machine.
 *
 * The budget: statements are carried by batches (a claim for many due
 * monitors, a result transaction for up to 200), so a round costs well under
 * one statement per check, and no statement runs more than once per four
 * checks; a change that adds a statement per check (a lookup per claim, a
 * lease renewal per check, an update per result) breaks it. Rows written per
 * check: the raw result, its hourly and daily roll-ups, the monitor's state
 * and its schedule row twice (claimed, then rescheduled); a seventh row per
 * check, a trigger's included, is a regression too.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { sql } from 'kysely';
import { createSecretBox } from '../src/crypto/secrets';
import { newId } from '../src/crypto/ids';
import { connectDb } from '../src/db/connect';
import { migrateToLatest } from '../src/db/migrate';
import { createOrganization } from '../src/domain/organizations';
import { startWorker, type Worker } from '../src/engine/worker';
import { createLogger } from '../src/log';
import { freshDatabase } from './support/harness';
import { until } from './support/expect';

const N = 400;
const STATEMENTS_PER_CHECK = 0.6;
const ONE_STATEMENT_PER_CHECK = 0.25;
/** Rows in the tables' own counts: the raw result, its hourly and daily roll-ups, the monitor's state, and its schedule twice (the claim, then the next due time); any trigger's rows count too. */
const ROWS_PER_CHECK = 6.5;

interface Counted { statements: Map<string, number>; rows: number }

/** Counts every statement the clients of `pool` send, and the rows their inserts, updates and deletes report. */
function countStatements(pool: pg.Pool): Counted {
  const counted: Counted = { statements: new Map(), rows: 0 };
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...a: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      // Lists of parameters (`in ($1, $2, …)`, multi-row values) differ by length, not by kind of statement.
      const text = (typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string })?.text ?? '?').replace(/\s+/g, ' ').trim()
        .replace(/\$\d+(, \$\d+)*/g, '$…').replace(/(\(\$…\))(, \(\$…\))+/g, '$1, …');
      counted.statements.set(text, (counted.statements.get(text) ?? 0) + 1);
      const out = query(...args) as Promise<pg.QueryResult> | undefined;
      void out?.then?.((r) => { if (r && ['INSERT', 'UPDATE', 'DELETE'].includes(r.command)) counted.rows += r.rowCount ?? 0; }, () => undefined);
      return out;
    };
  });
  return counted;
}

let target: http.Server;
let database: { url: string; drop: () => Promise<void> };
let worker: Worker | undefined;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  // Answers after a moment: the round's checks run together and finish together, so the worker's batches are
  // as full as its design makes them however loaded the machine (a count, not a timing, is asserted).
  target = http.createServer((_req, res) => { setTimeout(() => res.end('ok'), 300); });
  await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
  database = await freshDatabase();
});

afterAll(async () => {
  await worker?.stop(2000);
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await new Promise((r) => target.close(r));
  await database.drop();
});

test(`a steady-state round of ${N} checks stays within the SQL budget`, async () => {
  const setup = connectDb(database.url, 2);
  closers.push(() => setup.db.destroy());
  await migrateToLatest(setup.db);
  const org = await createOrganization(setup.db, { name: 'Budget', ownerEmail: 'budget@example.test', plan: 'enterprise' });
  const secrets = createSecretBox(randomBytes(32));
  const url = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
  const ids = Array.from({ length: N }, () => newId('mon'));
  await setup.db.insertInto('monitors').values(ids.map((id, i) => ({
    id, organization_id: org.organizationId, workspace_id: org.workspaceId, name: `budget ${i}`, kind: 'http',
    config_enc: secrets.seal(JSON.stringify({ url: `${url}/m/${i}` })), interval_seconds: 3600,
  }))).execute();
  const checked = async (since: Date) => Number((await setup.db.selectFrom('monitors').select((eb) => eb.fn.countAll<string>().as('n'))
    .where('organization_id', '=', org.organizationId).where('last_checked_at', '>=', since).executeTakeFirstOrThrow()).n);

  // One worker per round: stopping it and closing its connections makes PostgreSQL publish the rows its
  // backends wrote (pg_stat_user_tables, triggers' rows included), which a live backend may hold back for 10 s.
  const round = async (label: string, since: Date): Promise<Counted> => {
    const engine = connectDb(database.url, 10);
    const counted = countStatements(engine.pool);
    worker = startWorker({ db: engine.db, secrets, net: { allowPrivate: true, extraCa: [] }, log: createLogger('warn'), concurrency: N });
    await until(label, async () => (await checked(since)) === N, 60_000);
    await until(`${label} written`, async () => Number((await setup.db.selectFrom('monitor_schedule')
      .select((eb) => eb.fn.countAll<string>().as('n')).where('lease_until', 'is not', null).executeTakeFirstOrThrow()).n) === 0, 30_000);
    await worker.stop(2000);
    worker = undefined;
    await engine.db.destroy();
    return counted;
  };
  const tableRows = async () => {
    let last = -1;
    for (;;) {
      const { rows } = await sql<{ n: string }>`select sum(n_tup_ins + n_tup_upd + n_tup_del) as n from pg_stat_user_tables`.execute(setup.db);
      if (Number(rows[0].n) === last) return last;
      last = Number(rows[0].n);
      await new Promise((r) => setTimeout(r, 500));
    }
  };

  // Round 1 (new monitors are due at once): partitions, prepared statements, roll-up rows of the hour.
  await round('the first round', new Date(Date.now() - 1000));
  // Round 2, counted: every monitor due again (made so by a connection of its own, gone before the count starts).
  const second = new Date();
  const maker = connectDb(database.url, 1);
  await maker.db.updateTable('monitor_schedule').set({ next_due_at: new Date() }).execute();
  await maker.db.destroy();
  const rowsBefore = await tableRows();
  const counted = await round('the second round', second);
  const rowsInTables = (await tableRows()) - rowsBefore;

  const total = [...counted.statements.values()].reduce((a, b) => a + b, 0);
  const report = [...counted.statements].sort((a, b) => b[1] - a[1]).map(([text, n]) => `${n} × ${text.slice(0, 140)}`).join('\n');
  // The figures, for whoever reads the test's output after a change.
  process.stdout.write(`engine SQL budget: ${N} checks, ${total} statements (${(total / N).toFixed(3)} a check), ${counted.rows} rows written by them (${(counted.rows / N).toFixed(2)} a check), ${rowsInTables} in the tables' counts (${(rowsInTables / N).toFixed(2)})\n${report}\n`);
  expect({ statementsPerCheck: total / N <= STATEMENTS_PER_CHECK ? 'within' : total / N, report }).toEqual({ statementsPerCheck: 'within', report });
  for (const [text, n] of counted.statements) {
    expect({ text, perCheck: n / N <= ONE_STATEMENT_PER_CHECK ? 'within' : n / N }).toEqual({ text, perCheck: 'within' });
  }
  expect(counted.rows / N).toBeGreaterThanOrEqual(4); // the result, two roll-ups, the state: a count that saw nothing proves nothing
  // Rows as the tables count them: those of triggers too (a trigger that writes a row on every check is a regression as well).
  expect(rowsInTables / N).toBeLessThanOrEqual(ROWS_PER_CHECK);
}, 150_000);
