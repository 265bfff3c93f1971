import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import { changeIncident, writePostmortem } from '../domain/incidentActions';

/** Acting on incidents: acknowledge, resolve, comment, postmortem. */
export const alertingHandlers = {
  updateIncident: async ({ path, body }, ctx) => ({ data: await changeIncident(ctx.db, ctx.caller, path.id, body, ctx.require) }),
  setIncidentPostmortem: async ({ path, body }, ctx) => ({ data: await writePostmortem(ctx.db, ctx.caller, path.id, body.body ?? '') }),
} satisfies Partial<Handlers<Ctx>>;
