import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import { createMaintenance, deleteMaintenance, getMaintenance, listMaintenance, updateMaintenance } from '../domain/maintenance';

/** Maintenance windows. */
export const maintenanceHandlers = {
  listMaintenanceWindows: async ({ query }, ctx) => ({ data: await listMaintenance(ctx.db, ctx.caller, query.past === true, ctx.now) }),
  createMaintenanceWindow: async ({ body }, ctx) => ({ data: await createMaintenance(ctx.db, ctx.caller, body, ctx.now) }),
  getMaintenanceWindow: async ({ path }, ctx) => ({ data: await getMaintenance(ctx.db, ctx.caller, path.id, ctx.now) }),
  updateMaintenanceWindow: async ({ path, body }, ctx) => ({ data: await updateMaintenance(ctx.db, ctx.caller, path.id, body, ctx.now) }),
  deleteMaintenanceWindow: async ({ query }, ctx) => ({ data: await deleteMaintenance(ctx.db, ctx.caller, query.id, ctx.now) }),
} satisfies Partial<Handlers<Ctx>>;
