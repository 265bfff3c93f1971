import type { Schema } from './api';

type Hit = Schema<'SearchHit'>;

/** The types of search hits, in the order the server groups them, as people name them. */
export const HIT_TYPES: Record<Hit['type'], string> = {
  monitor: 'Monitors', incident: 'Incidents', postmortem: 'Postmortems', host: 'Hosts', status_page: 'Status pages',
  workspace: 'Workspaces', channel: 'Channels', maintenance: 'Maintenance windows', error_project: 'Error projects',
  error_issue: 'Error issues', analytics_site: 'Analytics sites', member: 'Members', invitation: 'Invitations',
  api_key: 'API keys', agent: 'Agents', probe: 'Private probes',
};

/**
 * The app's page for a hit: the API path of its read (`hit.path`) mapped to
 * the page showing it. Null where the app has no page for that type yet, so
 * a hit is never a link to "page not found".
 */
export function appPathOf(hit: Hit): string | null {
  switch (hit.type) {
    case 'monitor': return `/monitors/${hit.id}`;
    case 'incident': case 'postmortem': return `/incidents/${hit.id}`;
    case 'host': return `/hosts/${hit.id}`;
    case 'probe': return '/hosts';
    case 'channel': return '/channels';
    case 'maintenance': return '/maintenance';
    default: return null;
  }
}
