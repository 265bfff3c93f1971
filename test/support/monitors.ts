import { ok, until } from './expect';
import type { ApiClient, TestServer } from './harness';

/**
 * Waits for a check of monitor `id` that began after this call (a check
 * already under way may have judged an older state of its target), making the
 * monitor due again when needed, and returns the monitor as read then.
 */
export async function checkNow(server: TestServer, api: ApiClient, id: string) {
  const since = new Date();
  await until(`a check of ${id}`, async () => {
    const row = await server.db.selectFrom('monitors').select(['last_checked_at', 'lease_until', 'next_due_at']).where('id', '=', id).executeTakeFirstOrThrow();
    if (row.last_checked_at && row.last_checked_at >= since) return true;
    // Not claimed and not due (a check under way when we asked has set its next time): due again.
    const now = new Date();
    if ((!row.lease_until || row.lease_until < now) && (!row.next_due_at || row.next_due_at > now)) {
      await server.db.updateTable('monitors').set({ next_due_at: new Date(now.getTime() - 1000) }).where('id', '=', id).execute();
    }
    return false;
  });
  return ok('getMonitor', await api.get(`/monitors/${id}`));
}
