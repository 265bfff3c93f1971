/** Every read the app makes, as TanStack Query options: one key per resource, so live events can patch them. */
import { queryOptions } from '@tanstack/react-query';
import { api, ok, VigilApiError } from './api';

export const keys = {
  me: ['me'] as const,
  summary: ['summary'] as const,
  setup: ['setup'] as const,
  monitors: ['monitors'] as const,
  graphs: ['monitors', 'graphs'] as const,
  monitor: (id: string) => ['monitor', id] as const,
  incidents: ['incidents'] as const,
  incident: (id: string) => ['incident', id] as const,
  workspaces: ['workspaces'] as const,
  onCall: ['on-call'] as const,
  maintenance: ['maintenance'] as const,
  /** Under `maintenance`: invalidating the list reads an open window again too. */
  maintenanceWindow: (id: string) => ['maintenance', id] as const,
  channels: ['channels'] as const,
  hosts: ['hosts'] as const,
  host: (id: string) => ['hosts', id] as const,
  probes: ['probes'] as const,
  members: ['members'] as const,
};

const data = <T,>(p: Promise<{ data: T }>) => p.then((r) => r.data);

export const q = {
  /** The caller, or null when not signed in. */
  me: () => queryOptions({
    queryKey: keys.me,
    queryFn: () => data(ok(api.GET('/me'))).catch((e: unknown) => {
      if (e instanceof VigilApiError && e.status === 401) return null;
      throw e;
    }),
  }),
  summary: () => queryOptions({ queryKey: keys.summary, queryFn: () => data(ok(api.GET('/summary'))) }),
  setup: () => queryOptions({ queryKey: keys.setup, queryFn: () => data(ok(api.GET('/setup'))) }),
  monitors: () => queryOptions({ queryKey: keys.monitors, queryFn: () => data(ok(api.GET('/monitors'))) }),
  graphs: () => queryOptions({ queryKey: keys.graphs, queryFn: () => data(ok(api.GET('/monitors/graphs', { params: { query: { hours: 24 } } }))) }),
  monitor: (id: string) => queryOptions({ queryKey: keys.monitor(id), queryFn: () => data(ok(api.GET('/monitors/{id}', { params: { path: { id } } }))) }),
  monitorGraph: (id: string, hours: number) => queryOptions({
    queryKey: [...keys.monitor(id), 'graph', hours],
    queryFn: () => data(ok(api.GET('/monitors/{id}/graph', { params: { path: { id }, query: { hours } } }))),
  }),
  history: (id: string) => queryOptions({
    queryKey: [...keys.monitor(id), 'history'],
    queryFn: () => data(ok(api.GET('/monitors/{id}/history', { params: { path: { id }, query: { days: 90 } } }))),
  }),
  pushUrl: (id: string) => queryOptions({
    queryKey: [...keys.monitor(id), 'push-url'],
    queryFn: () => data(ok(api.GET('/monitors/{id}/push-url', { params: { path: { id } } }))),
  }),
  incidents: () => queryOptions({ queryKey: keys.incidents, queryFn: () => data(ok(api.GET('/incidents', { params: { query: { limit: 200 } } }))) }),
  incident: (id: string) => queryOptions({ queryKey: keys.incident(id), queryFn: () => data(ok(api.GET('/incidents/{id}', { params: { path: { id } } }))) }),
  events: (id: string) => queryOptions({
    queryKey: [...keys.incident(id), 'events'],
    queryFn: () => data(ok(api.GET('/incidents/{id}/events', { params: { path: { id } } }))),
  }),
  workspaces: () => queryOptions({ queryKey: keys.workspaces, queryFn: () => data(ok(api.GET('/workspaces'))) }),
  onCall: () => queryOptions({ queryKey: keys.onCall, queryFn: () => data(ok(api.GET('/on-call'))) }),
  channels: () => queryOptions({ queryKey: keys.channels, queryFn: () => data(ok(api.GET('/channels'))) }),
  hosts: () => queryOptions({ queryKey: keys.hosts, queryFn: () => data(ok(api.GET('/hosts'))) }),
  host: (id: string) => queryOptions({ queryKey: keys.host(id), queryFn: () => data(ok(api.GET('/hosts/{id}', { params: { path: { id } } }))) }),
  probes: () => queryOptions({ queryKey: keys.probes, queryFn: () => data(ok(api.GET('/probes'))) }),
  maintenance: () => queryOptions({ queryKey: keys.maintenance, queryFn: () => data(ok(api.GET('/maintenance'))) }),
  /** One window, upcoming, in progress or over (the list has only the first two). */
  maintenanceWindow: (id: string) => queryOptions({
    queryKey: keys.maintenanceWindow(id),
    queryFn: () => data(ok(api.GET('/maintenance/{id}', { params: { path: { id } } }))),
  }),
  /** The organisation's members (on-call participants, covers and steps pick from them). */
  // The cache holds GET /members whole (members and invitations, as Settings → Members reads it under
  // the same key); these pages select the members from it.
  membersAndInvitations: () => queryOptions({ queryKey: keys.members, queryFn: () => data(ok(api.GET('/members'))) }),
  members: () => queryOptions({ ...q.membersAndInvitations(), select: (d) => d.members }),
};
