import { routes, type Handlers } from '../../gen/routes';
import { can } from '../auth/caller';
import type { Permission } from '../auth/roles';
import type { Ctx } from '../pipeline/context';

/** A `Host` header that is a host name or address with an optional port, nothing else. */
const HOST = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;

/**
 * The base of the index's addresses: BASE_URL when it is set; otherwise the
 * host the client reached us by, which it can reach again (the listen
 * address, `http://127.0.0.1:8080` for `0.0.0.0`, is no address for a client
 * on another machine), else the listen address.
 */
function indexBase(ctx: Ctx): string {
  if (ctx.services.config.baseUrl) return ctx.services.config.baseUrl;
  const host = ctx.client.host;
  return host && HOST.test(host) ? `http://${host.toLowerCase()}` : ctx.services.baseUrl();
}

/** The route index: what the key in hand can use, what the key is, and where the agent server is. */
export const metaHandlers = {
  getIndex: async (_i, ctx) => {
    const { caller } = ctx;
    const base = indexBase(ctx);
    return {
      data: {
        version: '1',
        routes: routes.map((r) => ({
          method: r.method,
          // Relative to /api/v1 (IndexRoute.path), e.g. `/monitors/{id}`.
          path: r.path,
          operationId: r.operationId,
          permission: r.permission,
          allowed: !(r.sessionOnly && caller.kind === 'key') && (r.permissions.length === 0 || r.permissions.some((p) => can(caller, p as Permission))),
          built: r.built,
        })),
        key: caller.key && {
          id: caller.key.id, name: caller.key.name, prefix: caller.key.prefix, role: caller.role,
          // The key's own narrowing; empty when it carries all of its role's permissions (IndexKey.scopes).
          scopes: [...caller.key.scopes], workspaceIds: caller.workspaceIds ? [...caller.workspaceIds] : null,
        },
        mcp: `${base}/mcp`,
        openapi: `${base}/openapi.json`,
        proto: `${base}/api/proto`,
        docs: `${base}/docs`,
      },
    };
  },
} satisfies Partial<Handlers<Ctx>>;
