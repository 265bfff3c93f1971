import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import { feedStatus, revokeFeed, rotateFeed } from '../domain/feeds';

/** The incident feed token: its status, creation or replacement, and revocation (the feed itself: transport/feeds.ts). */
export const feedHandlers = {
  getIncidentFeed: async (_i, ctx) => ({ data: await feedStatus(ctx.db, ctx.caller) }),
  rotateIncidentFeed: async (_i, ctx) => ({ data: await rotateFeed(ctx.db, ctx.caller, ctx.services.baseUrl()) }),
  revokeIncidentFeed: async (_i, ctx) => ({ data: await revokeFeed(ctx.db, ctx.caller) }),
} satisfies Partial<Handlers<Ctx>>;
