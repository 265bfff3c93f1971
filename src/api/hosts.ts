import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import {
  addHostMonitor, createHost, deleteHost, getHost, listHosts, listMonitorHosts, removeHostMonitor, setMonitorHosts, updateHost,
} from '../domain/hosts';

/** Hosts and the hosts of a monitor. */
export const hostHandlers = {
  listHosts: async (_i, ctx) => ({ data: await listHosts(ctx.db, ctx.caller) }),
  createHost: async ({ body }, ctx) => ({ data: await createHost(ctx.db, ctx.caller, body) }),
  getHost: async ({ path }, ctx) => ({ data: await getHost(ctx.db, ctx.caller, path.id) }),
  updateHost: async ({ path, body }, ctx) => ({ data: await updateHost(ctx.db, ctx.caller, path.id, body) }),
  deleteHost: async ({ path }, ctx) => ({ data: await deleteHost(ctx.db, ctx.caller, path.id) }),
  addHostMonitor: async ({ path, body }, ctx) => ({ data: await addHostMonitor(ctx.db, ctx.caller, path.id, body.monitorId) }),
  // The query wins when both name a monitor (contract).
  removeHostMonitor: async ({ path, query, body }, ctx) => ({ data: await removeHostMonitor(ctx.db, ctx.caller, path.id, query.monitorId ?? body?.monitorId) }),
  listMonitorHosts: async ({ path }, ctx) => ({ data: await listMonitorHosts(ctx.db, ctx.caller, path.id) }),
  setMonitorHosts: async ({ path, body }, ctx) => ({ data: await setMonitorHosts(ctx.db, ctx.caller, path.id, body.hostIds) }),
} satisfies Partial<Handlers<Ctx>>;
