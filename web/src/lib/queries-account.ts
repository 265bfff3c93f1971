/** Reads of the Settings sections "My account" and "Billing" (kept apart from queries.ts: one key per resource). */
import { queryOptions } from '@tanstack/react-query';
import { api, ok } from './api';

export const accountKeys = {
  sessions: ['sessions'] as const,
  incidentFeed: ['incident-feed'] as const,
  billing: ['billing'] as const,
};

const data = <T,>(p: Promise<{ data: T }>) => p.then((r) => r.data);

export const qa = {
  /** The caller's signed-in sessions, newest first (session only). */
  sessions: () => queryOptions({ queryKey: accountKeys.sessions, queryFn: () => data(ok(api.GET('/sessions'))) }),
  /** Whether the organisation has an incident feed, and since when (never its URLs). */
  incidentFeed: () => queryOptions({ queryKey: accountKeys.incidentFeed, queryFn: () => data(ok(api.GET('/incident-feed'))) }),
  billing: () => queryOptions({ queryKey: accountKeys.billing, queryFn: () => data(ok(api.GET('/billing'))) }),
};
