import pg from 'pg';
import { cascadeReach, type ChangeClock } from './changes';

const CHANNEL = 'vigil_changes';
const TRIGGER = 'vigil_notify_change';
/** A connection that died without closing (a dropped route, a frozen peer) would lose notifications unseen: probe it. */
const HEARTBEAT_MS = 10_000;
const HEARTBEAT_DEADLINE_MS = 5_000;

/** Reads the foreign-key actions and the watched tables from the catalog into the clock. */
async function configure(client: pg.Client, clock: ChangeClock): Promise<void> {
  const fks = await client.query<{ parent: string; child: string; on_delete: boolean; on_update: boolean }>(`
    select confrelid::regclass::text as parent, conrelid::regclass::text as child,
           confdeltype in ('c', 'n', 'd') as on_delete, confupdtype in ('c', 'n', 'd') as on_update
      from pg_constraint
     where contype = 'f' and (confdeltype in ('c', 'n', 'd') or confupdtype in ('c', 'n', 'd'))`);
  // Tables with the statement trigger, and `monitor_status` (changes of a monitor's status only) when its row trigger exists.
  const watched = await client.query<{ name: string }>(`
    select distinct tgrelid::regclass::text as name from pg_trigger where tgname = $1
    union select 'monitor_status' from pg_trigger where tgname = 'vigil_notify_status'`, [TRIGGER]);
  clock.configure({
    onDelete: cascadeReach(fks.rows.filter((r) => r.on_delete)),
    // An update that changes a referenced key may set or cascade further; an update of any other column reaches nothing.
    onUpdate: cascadeReach(fks.rows.filter((r) => r.on_update)),
  }, watched.rows.map((r) => r.name));
}

/** The running listener; `close` stops it for good. */
export interface ChangeFeed { close(): Promise<void> }

/**
 * Keeps one connection LISTENing to the change notifications of migration 0006
 * and advances `clock` for every table another process (or this one) wrote.
 * When the connection drops, the clock stops being live at once (caches serve
 * nothing) and everything counts as changed; the feed reconnects with backoff.
 */
export async function startChangeFeed(url: string, clock: ChangeClock, log: (msg: string, e: unknown) => void): Promise<ChangeFeed> {
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let delay = 500;
  const heartbeat = setInterval(() => {
    const c = client;
    if (!c || !clock.live) return;
    c.query('select 1').catch((e: unknown) => down(c, e));
  }, HEARTBEAT_MS);
  heartbeat.unref();

  const down = (c: pg.Client, e?: unknown) => {
    if (client !== c) return;
    client = null;
    clock.live = false;
    clock.bump('all');
    c.end().catch(() => undefined);
    if (closed) return;
    if (e) log('change feed: connection lost; reads are not cached until it is back', e);
    retry = setTimeout(() => void connect(), delay);
    delay = Math.min(delay * 2, 30_000);
  };

  const connect = async (): Promise<void> => {
    const c = new pg.Client({
      connectionString: url, application_name: 'vigil-change-feed', keepAlive: true, query_timeout: HEARTBEAT_DEADLINE_MS,
    });
    client = c;
    c.on('error', (e) => down(c, e));
    c.on('end', () => down(c, new Error('connection ended')));
    c.on('notification', (n) => { if (n.channel === CHANNEL && n.payload) clock.bump([n.payload]); });
    try {
      await c.connect();
      await c.query(`listen ${CHANNEL}`);
      await configure(c, clock);
      if (client !== c || closed) return;
      // Whatever changed while nobody listened is unknown: start from a clean slate.
      clock.bump('all');
      clock.live = true;
      delay = 500;
    } catch (e) {
      down(c, e);
    }
  };

  await connect();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      clearInterval(heartbeat);
      const c = client;
      client = null;
      clock.live = false;
      await c?.end().catch(() => undefined);
    },
  };
}
