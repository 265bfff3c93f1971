import { QueryCache, QueryClient } from '@tanstack/react-query';
import { VigilApiError } from './api';
import { keys } from './queries';

/**
 * Reads happen when a page needs data it has not got, and otherwise only
 * when the live stream says something changed: no polling, no refetch on
 * focus or reconnect, data fresh for an hour. A 4xx is not retried (a 429
 * was already waited out by the client); a lost session shows sign-in.
 */
export const queryClient: QueryClient = new QueryClient({
  queryCache: new QueryCache({
    onError: (e, query) => {
      if (e instanceof VigilApiError && e.status === 401 && query.queryKey[0] !== 'me') queryClient.setQueryData(keys.me, null);
    },
  }),
  defaultOptions: {
    queries: {
      staleTime: 60 * 60_000,
      gcTime: 60 * 60_000,
      refetchOnWindowFocus: false,
      refetchOnReconnect: false,
      refetchInterval: false,
      retry: (n, e) => !(e instanceof VigilApiError && e.status >= 400 && e.status < 500) && n < 1,
    },
    mutations: { retry: false },
  },
});
