/**
 * What the event stream carries and who may see it (docs/stream.md). The rows
 * are written by triggers (migration 0033); here they become SSE messages,
 * and each is shown to a caller only under the rule of the read it changes.
 */
import { routes } from '../../gen/routes';
import { can, type Caller } from '../auth/caller';
import { reachVisible } from '../auth/confinement';
import type { Permission } from '../auth/roles';

/** The event types of the stream. `reset`: the client's cursor is too old (or unknown); refetch what it shows. */
export const EVENT_TYPES = [
  'monitor.status', 'monitor.changed', 'monitor.deleted',
  'incident.opened', 'incident.acknowledged', 'incident.resolved', 'incident.commented',
  'setup.changed', 'reset',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** A position in the log: the writing transaction and the row's number (see migration 0033 for why both). */
export interface Position { tx: bigint; seq: bigint }

/** One logged change, as read from `stream_events`. */
export interface StreamRow extends Position {
  organizationId: string;
  workspaceId: string | null;
  type: Exclude<EventType, 'reset'>;
  data: Record<string, unknown>;
  at: string;
}

/** Total order of positions. */
export function compare(a: Position, b: Position): number {
  return a.tx === b.tx ? (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0) : a.tx < b.tx ? -1 : 1;
}

/** The opaque cursor sent as `id:` (and taken back as `Last-Event-ID`). */
export function cursorOf(p: Position): string {
  return `${p.tx}-${p.seq}`;
}

/** A cursor back into a position; null when it is not one of ours (answered with `reset`). */
export function parseCursor(text: string | undefined | null): Position | null {
  const m = /^(\d{1,20})-(\d{1,20})$/.exec(text?.trim() ?? '');
  if (!m) return null;
  const tx = BigInt(m[1]);
  const seq = BigInt(m[2]);
  return tx < 2n ** 64n && seq < 2n ** 63n ? { tx, seq } : null;
}

/** The read whose answer an event changes: its permission is the event's (never a second rule). */
const READ_OF: Record<Exclude<EventType, 'reset'>, string> = {
  'monitor.status': 'getMonitor', 'monitor.changed': 'getMonitor', 'monitor.deleted': 'getMonitor',
  'incident.opened': 'getIncident', 'incident.acknowledged': 'getIncident', 'incident.resolved': 'getIncident', 'incident.commented': 'getIncident',
  'setup.changed': 'getSetup',
};

const PERMISSION_OF = Object.fromEntries(Object.entries(READ_OF).map(([type, op]) => {
  const route = routes.find((r) => r.operationId === op);
  if (!route?.permission) throw new Error(`stream: the read ${op} has no permission in the contract`);
  return [type, route.permission as Permission];
})) as Record<Exclude<EventType, 'reset'>, Permission>;

/**
 * Whether `caller` may see the event: its organisation, the permission of
 * the read it changes (role, key scopes, plan) and workspace confinement as
 * that read applies it (an organisation-level event, workspace null, is
 * everyone's who holds the permission).
 */
export function visibleTo(caller: Caller, row: StreamRow): boolean {
  if (row.organizationId !== caller.organizationId) return false;
  if (!can(caller, PERMISSION_OF[row.type])) return false;
  return reachVisible(caller, row.workspaceId === null ? null : [row.workspaceId]);
}
