import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import { createKey, listKeys, revokeKey } from '../domain/apiKeys';
import { listAudit } from '../domain/auditLog';
import { describeMe } from '../domain/me';

/** The caller, API keys and the audit log. */
export const accountHandlers = {
  getMe: async (_i, ctx) => ({ data: await describeMe(ctx.db, ctx.caller) }),
  listApiKeys: async (_i, ctx) => ({ data: await listKeys(ctx.db, ctx.caller) }),
  createApiKey: async ({ body }, ctx) => ({ data: await createKey(ctx.db, ctx.caller, body) }),
  revokeApiKey: async ({ query, body }, ctx) => ({ data: await revokeKey(ctx.db, ctx.caller, query.id ?? body?.id) }),
  listAuditEntries: async ({ query }, ctx) => listAudit(ctx.db, ctx.caller, query),
} satisfies Partial<Handlers<Ctx>>;
