/**
 * The export entities (spec: Resources, "Export files"), by the name the URL
 * uses: the one list. A name listed here without an entity fails `tsc`.
 */
import type { ExportEntity } from './entity';
import { analyticsHourly } from './entities/analyticsHourly';
import { auditLog } from './entities/auditLog';
import { errorIssues } from './entities/errorIssues';
import { hosts } from './entities/hosts';
import { incidentEvents } from './entities/incidentEvents';
import { incidents } from './entities/incidents';
import { members } from './entities/members';
import { monitors } from './entities/monitors';
import { notificationChannels } from './entities/notificationChannels';
import { postmortems } from './entities/postmortems';
import { statusPages } from './entities/statusPages';
import { uptimeDaily } from './entities/uptimeDaily';
import { uptimeHourly } from './entities/uptimeHourly';

/** Every entity name, in the order of the spec (and of the files in a zip). */
export const ENTITY_NAMES = [
  'monitors', 'hosts', 'status-pages', 'notification-channels', 'members', 'incidents', 'incident-events', 'postmortems',
  'audit-log', 'error-issues', 'uptime-daily', 'uptime-hourly', 'analytics-hourly',
] as const;

export type EntityName = (typeof ENTITY_NAMES)[number];

/** One entity per name. */
export const ENTITIES: Record<EntityName, ExportEntity> = {
  monitors,
  hosts,
  'status-pages': statusPages,
  'notification-channels': notificationChannels,
  members,
  incidents,
  'incident-events': incidentEvents,
  postmortems,
  'audit-log': auditLog,
  'error-issues': errorIssues,
  'uptime-daily': uptimeDaily,
  'uptime-hourly': uptimeHourly,
  'analytics-hourly': analyticsHourly,
};

/** True when `name` is an export entity. */
export function isEntityName(name: string): name is EntityName {
  return Object.hasOwn(ENTITIES, name);
}
