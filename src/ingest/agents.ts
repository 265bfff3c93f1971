/**
 * Agent samples on the ingestion write path (buffer.ts, docs/agents.md): a
 * report is authenticated by the agent's token (from memory: tokens.ts),
 * checked, and its samples are appended to `agent_report_buffer` by group
 * commit; the report is answered once they are committed. A drain in the
 * worker applies them set-wise: the agents' `last_seen_at`, hostname, OS and
 * version from their latest report, the samples into `agent_samples` and
 * their hourly roll-ups, and brings forward the checks of the `agent`
 * monitors watching those agents, so a threshold crossed pages within a
 * second or so.
 */
import { sql } from 'kysely';
import type { Db } from '../db/connect';
import type { Logger } from '../log';
import { ApiError } from '../pipeline/errors';
import type { ReportAnswer } from '../agent/wire';
import { agentTokenHash, FIGURES, parseReport, type BufferedSample } from './agentReport';
import { bufferWriter, startDrain, type BufferTable, type Drain } from './buffer';
import { TokenOwners } from './tokens';

/** A buffered sample as the drain takes it (`disks` parsed by the driver). */
type TakenSample = Omit<BufferedSample, 'disks'> & { seq: number; disks: unknown };

/** `agent_report_buffer` and its columns' types, for `bufferWriter`. */
export const AGENT_BUFFER: BufferTable<BufferedSample> = {
  table: 'agent_report_buffer',
  columns: [
    ['agent_id', 'text'], ['received_at', 'timestamptz'], ['hostname', 'text'], ['os', 'text'], ['version', 'text'],
    ['interval_seconds', 'integer'], ['at', 'timestamptz'],
    ...FIGURES.map(([, c]) => [c, 'float8'] as const),
    ['disks', 'jsonb'],
  ],
};

/** The receiving side: records the samples of an authenticated report. */
export interface AgentIngest {
  /** The agent a bearer token belongs to, or null (unknown, malformed or deleted). */
  agentOf(token: string | undefined): Promise<string | null>;
  /** Checks and buffers a report's samples; resolves once they are committed. */
  record(agentId: string, body: unknown, receivedAt?: Date): Promise<ReportAnswer>;
  /** Writes what is pending (shutdown). */
  flush(): Promise<void>;
}

const ingests = new WeakMap<Db, AgentIngest>();

/** The agent ingestion of `db`, one per database handle (its batches and token cache shared). */
export function agentIngestFor(db: Db): AgentIngest {
  let i = ingests.get(db);
  if (!i) ingests.set(db, (i = agentIngest(db)));
  return i;
}

function agentIngest(db: Db): AgentIngest {
  const tokens = new TokenOwners(db, 'agent_tokens', async (hash) =>
    (await db.selectFrom('agent_tokens').select('agent_id').where('hash', '=', hash).executeTakeFirst())?.agent_id ?? null);
  const buffer = bufferWriter(db, AGENT_BUFFER);
  return {
    async agentOf(token) {
      const hash = agentTokenHash(token);
      return hash ? tokens.ownerOf(hash) : null;
    },
    async record(agentId, body, receivedAt = new Date()) {
      const { rows, dropped } = parseReport(body, agentId, receivedAt);
      if (rows.length) await buffer.append(rows);
      return { accepted: rows.length, dropped };
    },
    flush: () => buffer.flush(),
  };
}

/** `{figure: {sum, count, min, max}}` of the inserted samples of one group (absent figures left out). */
const ROLLUP_FIGURES = sql.raw(`jsonb_strip_nulls(jsonb_build_object(${FIGURES.map(([name, c]) =>
  `'${name}', case when count(${c}) > 0 then jsonb_build_object('sum', sum(${c}), 'count', count(${c}), 'min', min(${c}), 'max', max(${c})) end`).join(', ')}))`);
const COLUMNS = ['agent_id', 'at', ...FIGURES.map(([, c]) => c), 'disks'] as const;

/**
 * Applies drained samples set-wise, in one transaction: the agents still
 * enrolled are locked (a delete waits for this batch, and a sample of an
 * agent deleted before is dropped), take their identity and `last_seen_at`
 * from their latest report (never moved back), and get the samples (a
 * sample already stored, by agent and time, is not stored or counted again)
 * and their hourly roll-ups. Returns the agents that got new samples.
 */
export async function applySamples(db: Db, items: readonly TakenSample[]): Promise<string[]> {
  if (items.length === 0) return [];
  const latest = new Map<string, TakenSample>();
  for (const s of items) {
    const l = latest.get(s.agent_id);
    if (!l || s.received_at.getTime() > l.received_at.getTime() || (s.received_at.getTime() === l.received_at.getTime() && s.seq > l.seq)) latest.set(s.agent_id, s);
  }
  const ids = [...latest.keys()].sort();
  return db.transaction().execute(async (tx) => {
    // In id order, so that two drains never wait on each other crosswise.
    const { rows: live } = await sql<{ id: string }>`select id from agents where id = any(${ids}::text[]) order by id for no key update`.execute(tx);
    if (live.length === 0) return [];
    const alive = new Set(live.map((r) => r.id));
    const reports = [...latest.values()].filter((s) => alive.has(s.agent_id));
    const newer = sql`a.last_seen_at is null or a.last_seen_at <= v.received_at`;
    await sql`update agents a set
        last_seen_at = case when ${newer} then v.received_at else a.last_seen_at end,
        hostname = case when ${newer} then coalesce(v.hostname, a.hostname) else a.hostname end,
        os = case when ${newer} then coalesce(v.os, a.os) else a.os end,
        version = case when ${newer} then coalesce(v.version, a.version) else a.version end,
        interval_seconds = case when ${newer} then coalesce(v.interval_seconds, a.interval_seconds) else a.interval_seconds end
      from unnest(${reports.map((r) => r.agent_id)}::text[], ${reports.map((r) => r.received_at)}::timestamptz[], ${reports.map((r) => r.hostname)}::text[],
          ${reports.map((r) => r.os)}::text[], ${reports.map((r) => r.version)}::text[], ${reports.map((r) => r.interval_seconds)}::integer[])
        as v(id, received_at, hostname, os, version, interval_seconds)
      where a.id = v.id`.execute(tx);
    const rows = items.filter((s) => alive.has(s.agent_id));
    const arrays = COLUMNS.map((c) => {
      if (c === 'disks') return sql`${rows.map((r) => (r.disks === null || r.disks === undefined ? null : JSON.stringify(r.disks)))}::jsonb[]`;
      if (c === 'agent_id') return sql`${rows.map((r) => r.agent_id)}::text[]`;
      if (c === 'at') return sql`${rows.map((r) => r.at)}::timestamptz[]`;
      return sql`${rows.map((r) => r[c])}::float8[]`;
    });
    const cols = sql.join(COLUMNS.map((c) => sql.ref(c)));
    const { rows: touched } = await sql<{ agent_id: string }>`with inserted as (
        insert into agent_samples (${cols}) select * from unnest(${sql.join(arrays)})
        on conflict (agent_id, at) do nothing
        returning *
      )
      insert into agent_rollup_hourly (agent_id, hour, samples, figures)
        select agent_id, date_bin('1 hour', at, timestamptz '2000-01-01 00:00:00+00'), count(*), ${ROLLUP_FIGURES}
        from inserted group by 1, 2
      on conflict (agent_id, hour) do update set samples = agent_rollup_hourly.samples + excluded.samples,
        figures = vigil_merge_readings(agent_rollup_hourly.figures, excluded.figures)
      returning agent_id`.execute(tx);
    return [...new Set(touched.map((r) => r.agent_id))];
  });
}

/**
 * Brings the next check of the `agent` monitors watching `agentIds` forward
 * to now, so a new sample is judged at once. Monitors whose check is under
 * way (leased) or whose row is busy are left to their schedule.
 */
export async function wakeAgentMonitors(db: Db, agentIds: readonly string[]): Promise<void> {
  if (agentIds.length === 0) return;
  await sql`update monitor_schedule set next_due_at = now() where monitor_id in (
      select s.monitor_id from monitor_schedule s join monitors m on m.id = s.monitor_id
      where m.agent_id = any(${[...agentIds]}::text[]) and m.kind = 'agent' and s.runnable
        and s.next_due_at > now() and (s.lease_until is null or s.lease_until < now())
      for update of s skip locked)`.execute(db);
}

/** The worker side: applies buffered samples (any number of workers share them). */
export function startAgentDrain(db: Db, log: Logger, o: { pollMs?: number; gapMs?: number; batch?: number } = {}): Drain {
  const alog = log.child({ component: 'agents' });
  return startDrain<BufferedSample, TakenSample>(db, {
    name: 'agent_report_buffer', buffer: AGENT_BUFFER, log: alog, gapMs: 100, batch: 5000, ...o,
    async process(items) {
      const agents = await applySamples(db, items);
      // After the commit, and only a hint: a monitor not woken is judged at its next interval.
      await wakeAgentMonitors(db, agents).catch((e: unknown) => alog.error('bringing agent monitors forward', e));
    },
  });
}

/** Thrown when a report cannot be recorded now (the database is away): 503, the agent keeps its samples and retries. */
export function unavailable(): ApiError {
  return new ApiError(503, 'unavailable', 'The report could not be recorded now; retry later.', {}, [], { 'Retry-After': '5' });
}
