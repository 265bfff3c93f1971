import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import { createProject, deleteProject, listProjects, updateProject } from '../errors/projects';

/** Error tracking: projects (issues, source maps and symbols come next: 501). */
export const errorHandlers = {
  listErrorProjects: async (_i, ctx) => ({ data: await listProjects(ctx.db, ctx.services, ctx.caller) }),
  createErrorProject: async ({ body }, ctx) => ({ data: await createProject(ctx.db, ctx.services, ctx.caller, body) }),
  updateErrorProject: async ({ path, body }, ctx) => ({ data: await updateProject(ctx.db, ctx.services, ctx.caller, path.id, body) }),
  deleteErrorProject: async ({ path }, ctx) => ({ data: await deleteProject(ctx.db, ctx.caller, path.id) }),
} satisfies Partial<Handlers<Ctx>>;
