import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import { getBilling } from '../billing/state';
import { createCheckout } from '../billing/stripe';

/** Billing (the App Store verification comes later: 501). */
export const billingHandlers = {
  getBilling: async (_i, ctx) => ({ data: await getBilling(ctx.db, ctx.caller, ctx.services.config) }),
  createCheckoutSession: async ({ body }, ctx) => ({ data: await createCheckout(ctx.db, ctx.services, ctx.caller, body) }),
} satisfies Partial<Handlers<Ctx>>;
