import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import { myOrganizations, setActiveOrganization } from '../people/organizations';
import { deleteAccount } from '../people/account';
import { changePassword, listSessions, requestPasswordReset, resetPassword, revokeSession, signIn, signUp } from '../people/sessions';

/** Signing in (sessions, passwords, sign-up), the person's organisations, and deleting the account. */
export const sessionHandlers = {
  signIn: async ({ body }, ctx) => ({ data: await signIn(ctx, body) }),
  listSessions: async (_i, ctx) => ({ data: await listSessions(ctx.db, ctx.caller) }),
  revokeSession: async ({ path }, ctx) => ({ data: await revokeSession(ctx.db, ctx.caller, path.id) }),
  requestPasswordReset: async ({ body }, ctx) => ({ data: await requestPasswordReset(ctx, body) }),
  resetPassword: async ({ body }, ctx) => ({ data: await resetPassword(ctx.db, body, ctx.client) }),
  changePassword: async ({ body }, ctx) => ({ data: await changePassword(ctx, body) }),
  signUp: async ({ body }, ctx) => ({ data: await signUp(ctx, body) }),
  deleteAccount: async (_i, ctx) => ({ data: await deleteAccount(ctx.db, ctx.caller) }),
  listOrganizations: async (_i, ctx) => ({ data: await myOrganizations(ctx.db, ctx.caller) }),
  setActiveOrganization: async ({ body }, ctx) => ({ data: await setActiveOrganization(ctx.db, ctx.caller, body.organizationId) }),
} satisfies Partial<Handlers<Ctx>>;
