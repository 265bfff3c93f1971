import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import { exportAll, exportEntity, type ExportContext } from '../export/files';

const exportContext = (ctx: Ctx): ExportContext => ({ db: ctx.db, caller: ctx.caller, secrets: ctx.services.secrets, now: ctx.now });

/** Data export: one entity as a file, or everything readable as a zip (streamed; src/export/). */
export const exportHandlers = {
  exportEntity: async (i, ctx) => exportEntity(exportContext(ctx), i.path.entity, i.query),
  exportAll: async (i, ctx) => exportAll(exportContext(ctx), i.query),
} satisfies Partial<Handlers<Ctx>>;
