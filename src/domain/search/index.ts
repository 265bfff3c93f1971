/**
 * GET /search: one typed registry of searched types, keyed by the contract's
 * type identifiers (a type added to `SearchHit.type` fails `tsc` until it is
 * here), in the order hits are grouped.
 */
import { sql } from 'kysely';
import { can, type Caller } from '../../auth/caller';
import type { Db } from '../../db/connect';
import { ApiError } from '../../pipeline/errors';
import { agent } from './agent';
import { analyticsSite } from './analyticsSite';
import { apiKey } from './apiKey';
import { channel } from './channel';
import { errorIssue } from './errorIssue';
import { errorProject } from './errorProject';
import { host } from './host';
import { incident } from './incident';
import { invitation } from './invitation';
import { maintenance } from './maintenance';
import { member } from './member';
import { monitor } from './monitor';
import { postmortem } from './postmortem';
import { probe } from './probe';
import { containsPattern, type SearchHit, type SearchSource, type SearchType, type Terms } from './source';
import { statusPage } from './statusPage';
import { workspace } from './workspace';

/** Every type, in the order of the contract's table (the order hits are grouped in). */
export const searchSources: { readonly [T in SearchType]: SearchSource } = {
  monitor, incident, postmortem, host, status_page: statusPage, workspace, channel, maintenance,
  error_project: errorProject, error_issue: errorIssue, analytics_site: analyticsSite,
  member, invitation, api_key: apiKey, agent, probe,
};

const ORDER = Object.keys(searchSources) as SearchType[];
const isType = (s: string): s is SearchType => Object.hasOwn(searchSources, s);

/**
 * Other spellings a client may name a type by (the spec does not show the
 * identifiers): the plural, the endpoint's path (`status-pages`, `api-keys`),
 * the export entity (`notification-channels`) or the resource's longer name.
 * Compared after lower-casing, with `-` and spaces read as `_`.
 */
const ALIASES: Record<string, SearchType> = {
  monitors: 'monitor', incidents: 'incident', postmortems: 'postmortem', hosts: 'host',
  status_pages: 'status_page', statuspage: 'status_page', statuspages: 'status_page',
  workspaces: 'workspace',
  channels: 'channel', notification_channel: 'channel', notification_channels: 'channel',
  maintenances: 'maintenance', maintenance_window: 'maintenance', maintenance_windows: 'maintenance',
  error_projects: 'error_project', error_issues: 'error_issue',
  analytics_sites: 'analytics_site',
  members: 'member', invitations: 'invitation',
  api_keys: 'api_key', apikey: 'api_key', apikeys: 'api_key',
  agents: 'agent', server_agent: 'agent', server_agents: 'agent',
  probes: 'probe', private_probe: 'probe', private_probes: 'probe',
};

/** The type a `type` entry names, or null. */
function typeNamed(entry: string): SearchType | null {
  const s = entry.toLowerCase().replace(/[-\s]+/g, '_');
  // Own keys only: `constructor` or `__proto__` are not aliases (they would read Object.prototype's).
  return isType(s) ? s : Object.hasOwn(ALIASES, s) ? ALIASES[s] : null;
}

/** The types a `type` parameter names (all when omitted or empty); 400 `unknown_search_type` naming an unknown one. */
export function typesOf(param: string | undefined): SearchType[] {
  const named = (param ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (!named.length) return ORDER;
  const unknown = named.find((s) => typeNamed(s) === null);
  if (unknown !== undefined) {
    throw new ApiError(400, 'unknown_search_type', `Unknown search type ${JSON.stringify(unknown)}; the types are ${ORDER.join(', ')}.`,
      { type: unknown }, [{ field: 'type', reason: `unknown type ${unknown}` }]);
  }
  const types = new Set(named.map(typeNamed));
  return ORDER.filter((t) => types.has(t));
}

/**
 * Hits for `q` across the types the caller may read (a type whose permission
 * it lacks is skipped: absent, like a type without matches), grouped by type.
 */
export async function search(db: Db, caller: Caller, query: { q: string; type?: string; limit?: number }): Promise<SearchHit[]> {
  const text = query.q.trim();
  if (!text) throw new ApiError(400, 'invalid_query', 'Invalid query parameter q: must contain something besides spaces.', { field: 'q' }, [{ field: 'q', reason: 'is blank' }]);
  const types = typesOf(query.type).filter((t) => can(caller, searchSources[t].permission));
  const terms: Terms = { text, short: [...text].length < 3, contains: containsPattern(text), limit: query.limit ?? 5 };
  // Each type in a transaction of its own (in parallel on the pool) with generic plans: planning
  // these statements anew for every `q` costs more than running them (measured: 1-2 ms against
  // 0.2 ms when nothing matches), and no arm's plan depends on the values (each is bounded).
  const groups = await Promise.all(types.map((t) => db.transaction().execute(async (tx) => {
    await sql`set local plan_cache_mode = force_generic_plan`.execute(tx);
    return searchSources[t].search(tx, caller, terms);
  })));
  return groups.flat();
}
