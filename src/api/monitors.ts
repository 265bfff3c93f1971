import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import { createMonitor, deleteMonitor, getMonitor, listMonitors, pushUrl, updateMonitor } from '../domain/monitors';
import { monitorGraph, monitorGraphs, monitorHistory } from '../domain/history';
import { dismissSetup, setup, summary } from '../domain/overview';

/** Monitors, summary and the setup checklist. */
export const monitorHandlers = {
  getSummary: async (_i, ctx) => ({ data: await summary(ctx.db, ctx.caller) }),
  getSetup: async (_i, ctx) => ({ data: await setup(ctx.db, ctx.caller, ctx.services.config.providers) }),
  dismissSetup: async (_i, ctx) => ({ data: await dismissSetup(ctx.db, ctx.caller) }),
  listMonitors: async ({ query }, ctx) => ({ data: await listMonitors(ctx.db, ctx.caller, query.tag) }),
  createMonitor: async ({ body }, ctx) => ({ data: await createMonitor(ctx.db, ctx.services.secrets, ctx.caller, body) }),
  getMonitor: async ({ path }, ctx) => ({ data: await getMonitor(ctx.db, ctx.caller, path.id) }),
  updateMonitor: async ({ path, body }, ctx) => ({ data: await updateMonitor(ctx.db, ctx.services.secrets, ctx.caller, path.id, body, ctx.require) }),
  deleteMonitor: async ({ path }, ctx) => ({ data: await deleteMonitor(ctx.db, ctx.caller, path.id) }),
  getMonitorHistory: async ({ path, query }, ctx) => ({ data: await monitorHistory(ctx.db, ctx.caller, path.id, query.days) }),
  getMonitorGraph: async ({ path, query }, ctx) => ({ data: await monitorGraph(ctx.db, ctx.caller, path.id, query.hours) }),
  listMonitorGraphs: async ({ query }, ctx) => ({ data: await monitorGraphs(ctx.db, ctx.caller, query.hours) }),
  getMonitorPushUrl: async ({ path }, ctx) => ({ data: await pushUrl(ctx.db, ctx.services.secrets, ctx.caller, path.id, ctx.services.baseUrl()) }),
} satisfies Partial<Handlers<Ctx>>;
