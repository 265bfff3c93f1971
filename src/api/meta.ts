import { routes, type Handlers } from '../../gen/routes';
import { can } from '../auth/caller';
import type { Permission } from '../auth/roles';
import type { Ctx } from '../pipeline/context';

/** The route index: what the key in hand can use, what the key is, and where the agent server is. */
export const metaHandlers = {
  getIndex: async (_i, ctx) => {
    const { caller } = ctx;
    const base = ctx.services.baseUrl();
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
