import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import {
  createEscalationPolicy, createOverride, createSchedule, deleteEscalationPolicy, deleteOverride, deleteSchedule, getOnCall,
} from '../domain/oncall';
import { updateEscalationPolicy, updateSchedule } from '../domain/oncallEdit';

/** On-call schedules, escalation policies and overrides. */
export const oncallHandlers = {
  getOnCall: async (_i, ctx) => ({ data: await getOnCall(ctx.db, ctx.caller, ctx.now, ctx.services.config.providers) }),
  createSchedule: async ({ body }, ctx) => ({ data: await createSchedule(ctx.db, ctx.caller, body) }),
  updateSchedule: async ({ path, body }, ctx) => ({ data: await updateSchedule(ctx.db, ctx.caller, path.id, body, ctx.now) }),
  deleteSchedule: async ({ path }, ctx) => ({ data: await deleteSchedule(ctx.db, ctx.caller, path.id) }),
  createEscalationPolicy: async ({ body }, ctx) => ({ data: await createEscalationPolicy(ctx.db, ctx.caller, body) }),
  updateEscalationPolicy: async ({ path, body }, ctx) => ({ data: await updateEscalationPolicy(ctx.db, ctx.caller, path.id, body) }),
  deleteEscalationPolicy: async ({ path }, ctx) => ({ data: await deleteEscalationPolicy(ctx.db, ctx.caller, path.id) }),
  createOverride: async ({ body }, ctx) => ({ data: await createOverride(ctx.db, ctx.caller, body) }),
  deleteOverride: async ({ path }, ctx) => ({ data: await deleteOverride(ctx.db, ctx.caller, path.id) }),
} satisfies Partial<Handlers<Ctx>>;
