/** The reads of the Settings sections API keys and Audit log (kept apart from queries.ts, which the other pages share). */
import { infiniteQueryOptions, queryOptions } from '@tanstack/react-query';
import { api, ok } from './api';

export const settingsKeys = {
  apiKeys: ['api-keys'] as const,
  /** Every audit read starts with this key, so a write invalidates the log under any filters. */
  audit: ['audit'] as const,
};

/** One page of the audit log: the contract's default size. */
export const AUDIT_PAGE = 50;

/** The server-side filters of `GET /audit`; absent = no filter. `from`/`to` are instants (from inclusive, to exclusive). */
export interface AuditFilters {
  actor?: string;
  action?: string;
  resourceType?: string;
  resourceId?: string;
  from?: string;
  to?: string;
}

export const qs = {
  apiKeys: () => queryOptions({ queryKey: settingsKeys.apiKeys, queryFn: () => ok(api.GET('/api-keys')).then((r) => r.data) }),
  /**
   * The audit log under `filters`, newest first, one page per `nextBefore`
   * cursor (sent with the same filters); older pages load only when asked for.
   * The filters are part of the key: one read per filter change.
   */
  audit: (filters: AuditFilters = {}) => infiniteQueryOptions({
    queryKey: [...settingsKeys.audit, filters] as const,
    initialPageParam: null as string | null,
    queryFn: ({ pageParam }) => ok(api.GET('/audit', { params: { query: { limit: AUDIT_PAGE, ...filters, ...(pageParam ? { before: pageParam } : {}) } } })),
    getNextPageParam: (last) => last.nextBefore,
  }),
};
