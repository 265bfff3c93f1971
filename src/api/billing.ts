import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import { getBilling } from '../billing/state';
import { createCheckout } from '../billing/stripe';
import { verifyStorePurchase } from '../billing/appStore';

/** Billing: the state, Stripe checkout, App Store purchases. */
export const billingHandlers = {
  getBilling: async (_i, ctx) => ({ data: await getBilling(ctx.db, ctx.caller, ctx.services.config) }),
  createCheckoutSession: async ({ body }, ctx) => ({ data: await createCheckout(ctx.db, ctx.services, ctx.caller, body) }),
  verifyStorePurchase: async ({ body }, ctx) => ({ data: await verifyStorePurchase(ctx.db, ctx.services.config, ctx.caller, body) }),
} satisfies Partial<Handlers<Ctx>>;
