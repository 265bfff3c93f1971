import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import { createWorkspace, deleteWorkspace, listWorkspaces, updateWorkspace } from '../domain/workspaces';

/** Workspaces. */
export const workspaceHandlers = {
  listWorkspaces: async (_i, ctx) => ({ data: await listWorkspaces(ctx.db, ctx.caller) }),
  createWorkspace: async ({ body }, ctx) => ({ data: await createWorkspace(ctx.db, ctx.caller, body) }),
  updateWorkspace: async ({ path, body }, ctx) => ({ data: await updateWorkspace(ctx.db, ctx.caller, path.id, body) }),
  deleteWorkspace: async ({ path }, ctx) => ({ data: await deleteWorkspace(ctx.db, ctx.caller, path.id) }),
} satisfies Partial<Handlers<Ctx>>;
