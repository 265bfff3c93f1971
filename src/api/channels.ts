import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import {
  createChannel, deleteChannel, listChannels, listMonitorChannels, resendConfirmation, setMonitorChannels, testChannel, updateChannel,
} from '../domain/channels';

/** Notification channels and the channels of a monitor. */
export const channelHandlers = {
  listChannels: async (_i, ctx) => ({ data: await listChannels(ctx.db, ctx.services, ctx.caller) }),
  createChannel: async ({ body }, ctx) => ({ data: await createChannel(ctx.db, ctx.services, ctx.caller, body) }),
  updateChannel: async ({ path, body }, ctx) => ({ data: await updateChannel(ctx.db, ctx.services, ctx.caller, path.id, body) }),
  deleteChannel: async ({ path }, ctx) => ({ data: await deleteChannel(ctx.db, ctx.caller, path.id) }),
  // x-permission is null: the channel is resolved (404) before notification_channel:manage is required.
  sendChannelConfirmation: async ({ path }, ctx) => ({ data: await resendConfirmation(ctx.db, ctx.services, ctx.caller, path.id, ctx.require) }),
  testChannel: async ({ path }, ctx) => ({ data: await testChannel(ctx.db, ctx.services, ctx.caller, path.id, ctx.now) }),
  listMonitorChannels: async ({ path }, ctx) => ({ data: await listMonitorChannels(ctx.db, ctx.services, ctx.caller, path.id) }),
  setMonitorChannels: async ({ path, body }, ctx) => ({ data: await setMonitorChannels(ctx.db, ctx.services, ctx.caller, path.id, body.channelIds) }),
} satisfies Partial<Handlers<Ctx>>;
