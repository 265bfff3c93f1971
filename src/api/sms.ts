import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import { confirmSms, enrolSms } from '../people/sms';

/** SMS enrolment (session only). */
export const smsHandlers = {
  createSmsEnrolment: async ({ body }, ctx) => ({ data: await enrolSms(ctx.db, ctx.services, ctx.caller, body) }),
  confirmSmsEnrolment: async ({ body }, ctx) => ({ data: await confirmSms(ctx.db, ctx.caller, body) }),
} satisfies Partial<Handlers<Ctx>>;
