import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import { createSite, deleteSite, listSites, updateSite } from '../analytics/sites';
import { siteReport } from '../analytics/report';
import { listSiteChannels, setSiteChannels } from '../analytics/channels';

/** Web analytics: sites, their figures and who a traffic drop pages. */
export const analyticsHandlers = {
  listAnalyticsSites: async (_i, ctx) => ({ data: await listSites(ctx.db, ctx.services, ctx.caller, ctx.now) }),
  createAnalyticsSite: async ({ body }, ctx) => ({ data: await createSite(ctx.db, ctx.services, ctx.caller, body, ctx.now) }),
  getAnalyticsSite: async ({ path, query }, ctx) => ({ data: await siteReport(ctx.db, ctx.services, ctx.caller, path.id, query, ctx.now) }),
  updateAnalyticsSite: async ({ path, body }, ctx) => ({ data: await updateSite(ctx.db, ctx.services, ctx.caller, path.id, body, ctx.now) }),
  deleteAnalyticsSite: async ({ path }, ctx) => ({ data: await deleteSite(ctx.db, ctx.caller, path.id) }),
  listAnalyticsSiteChannels: async ({ path }, ctx) => ({ data: await listSiteChannels(ctx.db, ctx.services, ctx.caller, path.id) }),
  setAnalyticsSiteChannels: async ({ path, body }, ctx) => ({ data: await setSiteChannels(ctx.db, ctx.services, ctx.caller, path.id, body.channelIds) }),
} satisfies Partial<Handlers<Ctx>>;
