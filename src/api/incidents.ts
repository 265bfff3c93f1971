import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import { getIncident, incidentEvents, listIncidents } from '../domain/incidents';

/** Incident reads (acting on incidents arrives with alerting). */
export const incidentHandlers = {
  listIncidents: async ({ query }, ctx) => ({ data: await listIncidents(ctx.db, ctx.caller, query) }),
  getIncident: async ({ path }, ctx) => ({ data: await getIncident(ctx.db, ctx.caller, path.id) }),
  listIncidentEvents: async ({ path }, ctx) => ({ data: await incidentEvents(ctx.db, ctx.caller, path.id) }),
} satisfies Partial<Handlers<Ctx>>;
