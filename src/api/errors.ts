import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import { createProject, deleteProject, listProjects, updateProject } from '../errors/projects';
import { listProjectChannels, setProjectChannels } from '../errors/channels';
import { getIssue, listIssues, updateIssue } from '../errors/issues';
import { uploadSourceMap } from '../errors/sourcemaps';
import { uploadSymbols } from '../errors/symbols/upload';

/** Error tracking: projects, issues, source maps and mobile symbols. */
export const errorHandlers = {
  listErrorProjects: async (_i, ctx) => ({ data: await listProjects(ctx.db, ctx.services, ctx.caller) }),
  createErrorProject: async ({ body }, ctx) => ({ data: await createProject(ctx.db, ctx.services, ctx.caller, body) }),
  updateErrorProject: async ({ path, body }, ctx) => ({ data: await updateProject(ctx.db, ctx.services, ctx.caller, path.id, body) }),
  deleteErrorProject: async ({ path }, ctx) => ({ data: await deleteProject(ctx.db, ctx.caller, path.id) }),
  listErrorProjectChannels: async ({ path }, ctx) => ({ data: await listProjectChannels(ctx.db, ctx.services, ctx.caller, path.id) }),
  setErrorProjectChannels: async ({ path, body }, ctx) => ({ data: await setProjectChannels(ctx.db, ctx.services, ctx.caller, path.id, body.channelIds) }),
  listErrorIssues: async ({ query }, ctx) => ({ data: await listIssues(ctx.db, ctx.caller, query) }),
  getErrorIssue: async ({ path }, ctx) => ({ data: await getIssue(ctx.db, ctx.caller, path.id) }),
  updateErrorIssue: async ({ path, body }, ctx) => ({ data: await updateIssue(ctx.db, ctx.caller, path.id, body) }),
  uploadSourceMap: async ({ body }, ctx) => ({ data: await uploadSourceMap(ctx.db, ctx.caller, body) }),
  uploadSymbols: async ({ body, headers }, ctx) => ({ data: await uploadSymbols(ctx.db, ctx.caller, body, headers) }),
} satisfies Partial<Handlers<Ctx>>;
