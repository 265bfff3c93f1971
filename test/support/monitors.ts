import { ok, until } from './expect';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema';
import type { ApiClient, TestServer } from './harness';

/** Makes monitors `ids` due `agoMs` ago (their claims, if any, stay). */
export async function makeDue(db: Kysely<Database>, ids: readonly string[], agoMs = 1000): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('monitor_schedule').set({ next_due_at: new Date(Date.now() - agoMs) }).where('monitor_id', 'in', [...ids]).execute();
}

/** Monitor `id`'s schedule: when it is next due, and until when it is claimed. */
export function scheduleOf(db: Kysely<Database>, id: string) {
  return db.selectFrom('monitor_schedule').select(['next_due_at', 'lease_until', 'runnable']).where('monitor_id', '=', id).executeTakeFirstOrThrow();
}

/**
 * Waits for a check of monitor `id` that began after this call (a check
 * already under way may have judged an older state of its target), making the
 * monitor due again when needed, and returns the monitor as read then.
 */
export async function checkNow(server: TestServer, api: ApiClient, id: string) {
  const since = new Date();
  await until(`a check of ${id}`, async () => {
    const row = await server.db.selectFrom('monitors').innerJoin('monitor_schedule as s', 's.monitor_id', 'monitors.id')
      .select(['last_checked_at', 's.lease_until', 's.next_due_at']).where('id', '=', id).executeTakeFirstOrThrow();
    if (row.last_checked_at && row.last_checked_at >= since) return true;
    // Not claimed and not due (a check under way when we asked has set its next time): due again.
    const now = new Date();
    if ((!row.lease_until || row.lease_until < now) && row.next_due_at > now) await makeDue(server.db, [id]);
    return false;
  });
  return ok('getMonitor', await api.get(`/monitors/${id}`));
}
