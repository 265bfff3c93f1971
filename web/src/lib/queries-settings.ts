/** The reads of the Settings sections API keys and Audit log (kept apart from queries.ts, which the other pages share). */
import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import { api, ok } from './api';

export const settingsKeys = {
  apiKeys: ['api-keys'] as const,
  audit: ['audit'] as const,
};

/** One page of the audit log: the contract's default size. */
export const AUDIT_PAGE = 50;

export const qs = {
  apiKeys: () => queryOptions({ queryKey: settingsKeys.apiKeys, queryFn: () => ok(api.GET('/api-keys')).then((r) => r.data) }),
  /** The audit log, newest first, one page per `nextBefore` cursor; older pages load only when asked for. */
  audit: () => infiniteQueryOptions({
    queryKey: settingsKeys.audit,
    initialPageParam: null as string | null,
    queryFn: ({ pageParam }) => ok(api.GET('/audit', { params: { query: { limit: AUDIT_PAGE, ...(pageParam ? { before: pageParam } : {}) } } })),
    getNextPageParam: (last) => last.nextBefore,
  }),
};
