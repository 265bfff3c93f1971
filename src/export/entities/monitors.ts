/**
 * Monitors, by creation. The config is included with the kind's sealed
 * (credential) fields removed — `sealedFields` of src/engine/kinds/<kind>.ts:
 * http headers and body, SNMP community and v3 passwords — and a URL's
 * credentials: its userinfo (user name and password) and the values of query
 * parameters named like one (`token`, `api_key`, `signature`…); a config that cannot be opened, or of a kind this version
 * does not know, is null. Never the heartbeat token, never check results
 * (last message, detail).
 */
import { sql } from 'kysely';
import { isKind, kinds } from '../../engine/kinds';
import type { SecretBox } from '../../crypto/secrets';
import { confined, isoOf, within, type ExportEntity } from '../entity';

/** The config as exported: sealed fields dropped, a URL's credentials removed; null when it cannot be read safely. */
export function exportedConfig(kind: string, sealed: string, secrets: SecretBox): Record<string, unknown> | null {
  if (!isKind(kind)) return null;
  const text = secrets.open(sealed);
  if (text === null) return null;
  let config: unknown;
  try { config = JSON.parse(text); } catch { return null; }
  if (typeof config !== 'object' || config === null || Array.isArray(config)) return null;
  const out: Record<string, unknown> = { ...config };
  for (const field of kinds[kind].sealedFields) delete out[field];
  if (typeof out.url === 'string') out.url = withoutCredentials(out.url);
  return out;
}

/** Query parameters that carry a credential by their name (alone or as the last word: `api_key`, `access-token`, `accessToken`, `X-Amz-Signature`). */
const SECRET_PARAM = /(?:^|[-_.])(?:token|key|apikey|secret|password|passwd|pwd|pass|auth|authorization|signature|sig|credentials?|session|sid)$/i;

/**
 * A URL without what authenticates it: the userinfo goes, and a query
 * parameter named like a credential keeps its name with the value
 * `redacted` (so the export still says one was there).
 */
export function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    let changed = false;
    if (u.username || u.password) { u.username = ''; u.password = ''; changed = true; }
    for (const name of new Set(u.searchParams.keys())) {
      // camelCase words count as words too: `accessToken`, `apiKey`, `clientSecret`.
      if (SECRET_PARAM.test(name.replace(/([a-z0-9])([A-Z])/g, '$1_$2'))) { u.searchParams.set(name, 'redacted'); changed = true; }
    }
    return changed ? u.toString() : url;
  } catch {
    return url;
  }
}

export const monitors: ExportEntity = {
  columns: [
    'id', 'name', 'kind', 'workspaceId', 'workspaceName', 'status', 'enabled', 'intervalSeconds', 'confirmations', 'tags',
    'dependsOn', 'probeId', 'hostIds', 'config', 'statusSince', 'lastCheckedAt', 'uptime24h', 'uptime30d', 'createdAt', 'updatedAt',
  ],
  permission: 'monitor:read',
  hourly: false,
  time: 'creation (createdAt)',
  query: (db, scope) => db.selectFrom('monitors as m')
    .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
    .select([
      'm.id', 'm.name', 'm.kind', 'm.workspace_id as workspaceId', 'w.name as workspaceName',
      sql<string>`case when m.paused then 'paused' else m.status end`.as('status'),
      'm.enabled', 'm.interval_seconds as intervalSeconds', 'm.confirmations', 'm.tags', 'm.depends_on as dependsOn', 'm.probe_id as probeId',
      sql<string[]>`array(select mh.host_id from monitor_hosts mh where mh.monitor_id = m.id order by mh.host_id)`.as('hostIds'),
      'm.config_enc',
      isoOf('m.status_since').as('statusSince'), isoOf('m.last_checked_at').as('lastCheckedAt'),
      'm.uptime_24h as uptime24h', 'm.uptime_30d as uptime30d', isoOf('m.created_at').as('createdAt'), isoOf('m.updated_at').as('updatedAt'),
    ])
    .where('m.organization_id', '=', scope.organizationId)
    .where(confined('m.workspace_id', scope))
    .where(within('m.created_at', scope))
    .orderBy('m.created_at').orderBy('m.id'),
  map: (row, ctx) => ({ ...row, config: exportedConfig(String(row.kind), String(row.config_enc), ctx.secrets) }),
};
