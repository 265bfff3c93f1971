/**
 * Exports through the browser: `GET /export` (a zip of everything readable)
 * or `GET /export/{entity}` (one file), fetched with the session cookie and
 * handed to the browser as a download. Its own client instance: an export is
 * never retried (each try would spend one of the organisation's 6 an hour),
 * and its 429 (bucket `export`, up to an hour) must not put the app-wide
 * "reads are limited" banner up, since reads are not.
 */
import { createVigilClient, toApiError } from '../../../clients/typescript/src/index.js';
import type { Permission } from './permissions';

const exporter = createVigilClient({ baseUrl: '', maxReadRetries: 0 }).api;

/** Exports an hour per organisation (the contract's `export` bucket), both routes together. */
export const EXPORT_LIMIT_PER_HOUR = 6;
/** The widest window of an hourly series, in days (400 `export_window_too_wide` beyond). */
export const HOURLY_WINDOW_DAYS = 92;

/** The entities of `GET /export/{entity}` and the permission each needs (openapi.yaml). */
export const ENTITIES: Array<{ name: string; label: string; needs: Permission; hourly?: boolean }> = [
  { name: 'monitors', label: 'Monitors', needs: 'monitor:read' },
  { name: 'hosts', label: 'Hosts', needs: 'monitor:read' },
  { name: 'status-pages', label: 'Status pages', needs: 'status_page:read' },
  { name: 'notification-channels', label: 'Notification channels', needs: 'notification_channel:read' },
  { name: 'members', label: 'Members', needs: 'member:read' },
  { name: 'incidents', label: 'Incidents', needs: 'incident:read' },
  { name: 'incident-events', label: 'Incident timeline events', needs: 'incident:read' },
  { name: 'postmortems', label: 'Postmortems', needs: 'incident:read' },
  { name: 'audit-log', label: 'Audit log', needs: 'audit_log:read' },
  { name: 'error-issues', label: 'Error issues', needs: 'monitor:read' },
  { name: 'uptime-daily', label: 'Uptime per day', needs: 'monitor:read' },
  { name: 'uptime-hourly', label: 'Uptime per hour', needs: 'monitor:read', hourly: true },
  { name: 'analytics-hourly', label: 'Analytics per hour', needs: 'monitor:read', hourly: true },
];

export interface ExportQuery { format: 'csv' | 'json'; from?: string; to?: string; bom?: boolean }

/** The file name of a `Content-Disposition: attachment; filename="…"`, or a fallback. */
function fileName(disposition: string | null, fallback: string): string {
  return /filename="([^"]+)"/.exec(disposition ?? '')?.[1] ?? fallback;
}

/** Runs one export (`entity` null: the zip) and saves it through the browser's download; throws VigilApiError on a refusal. */
export async function downloadExport(entity: string | null, query: ExportQuery): Promise<string> {
  const r = entity
    ? await exporter.GET('/export/{entity}', { params: { path: { entity }, query }, parseAs: 'blob' })
    : await exporter.GET('/export', { params: { query }, parseAs: 'blob' });
  if (!r.response.ok || !(r.data instanceof Blob)) throw toApiError(r.response, r.error);
  const name = fileName(r.response.headers.get('content-disposition'), entity ? `vigil-${entity}.${query.format}` : 'vigil-export.zip');
  const url = URL.createObjectURL(r.data);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  // The download has taken the blob by the next task; the URL is then only memory.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  return name;
}

/**
 * What this browser knows of the hourly budget: the server tells no count
 * left (only a 429 with Retry-After once it is spent), so the page counts the
 * exports started here in the last hour and remembers the server's last
 * "retry at". Others of the organisation spend the same budget.
 */
const storeKey = (orgId: string) => `vigil.exports.${orgId}`;
interface Ledger { started: number[]; refusedUntil: number | null }

export function readLedger(orgId: string, now = Date.now()): Ledger {
  let l: Partial<Ledger> = {};
  try { l = JSON.parse(localStorage.getItem(storeKey(orgId)) ?? '{}') as Partial<Ledger>; } catch { /* unreadable: start over */ }
  return {
    started: (Array.isArray(l.started) ? l.started : []).filter((t) => typeof t === 'number' && t > now - 3_600_000),
    refusedUntil: typeof l.refusedUntil === 'number' && l.refusedUntil > now ? l.refusedUntil : null,
  };
}

export function writeLedger(orgId: string, l: Ledger): void {
  try { localStorage.setItem(storeKey(orgId), JSON.stringify(l)); } catch { /* storage off: the count lives for this page only */ }
}
