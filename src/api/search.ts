import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import { search } from '../domain/search';

/** GET /search. */
export const searchHandlers = {
  searchResources: async ({ query }, ctx) => ({ data: await search(ctx.db, ctx.caller, query) }),
} satisfies Partial<Handlers<Ctx>>;
