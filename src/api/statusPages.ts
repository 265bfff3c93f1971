import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import { addComponent, createStatusPage, deleteStatusPage, getStatusPage, listStatusPages, removeComponent, updateStatusPage } from '../statuspages/pages';
import { verifyDomain } from '../statuspages/domains';
import { listSubscribers, removeSubscriber } from '../statuspages/subscribers';

/** Status pages, their components, custom domain and subscribers. */
export const statusPageHandlers = {
  listStatusPages: async (_i, ctx) => ({ data: await listStatusPages(ctx.db, ctx.caller) }),
  createStatusPage: async ({ body }, ctx) => ({ data: await createStatusPage(ctx.db, ctx.caller, body, ctx.services.baseUrl()) }),
  getStatusPage: async ({ path }, ctx) => ({ data: await getStatusPage(ctx.db, ctx.caller, path.id, ctx.services.baseUrl()) }),
  updateStatusPage: async ({ path, body }, ctx) => ({ data: await updateStatusPage(ctx.db, ctx.caller, path.id, body, ctx.services.baseUrl()) }),
  deleteStatusPage: async ({ path }, ctx) => ({ data: await deleteStatusPage(ctx.db, ctx.caller, path.id, ctx.services.baseUrl()) }),
  addStatusPageComponent: async ({ path, body }, ctx) => ({ data: await addComponent(ctx.db, ctx.caller, path.id, body) }),
  removeStatusPageComponent: async ({ path, query, body }, ctx) => ({ data: await removeComponent(ctx.db, ctx.caller, path.id, query.component ?? body?.componentId) }),
  verifyStatusPageDomain: async ({ path }, ctx) => ({ data: await verifyDomain(ctx.db, ctx.caller, path.id, ctx.services.config.dnsResolver, ctx.services.net) }),
  listStatusPageSubscribers: async ({ path }, ctx) => ({ data: await listSubscribers(ctx.db, ctx.caller, path.id) }),
  removeStatusPageSubscriber: async ({ path, query, body }, ctx) => ({ data: await removeSubscriber(ctx.db, ctx.caller, path.id, query.subscriber ?? body?.subscriberId) }),
} satisfies Partial<Handlers<Ctx>>;
