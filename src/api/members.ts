import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import { listMembers, removeMember, updateMember, withdrawInvitation } from '../people/members';
import { acceptInvitationByToken, inviteMember } from '../people/invitations';

/** Members and invitations (accepting one needs no credential: the link's token is one). */
export const memberHandlers = {
  listMembers: async (_i, ctx) => ({ data: await listMembers(ctx.db, ctx.caller) }),
  inviteMember: async ({ body }, ctx) => ({ data: await inviteMember(ctx.db, ctx.services, ctx.caller, body) }),
  updateMember: async ({ path, body }, ctx) => ({ data: await updateMember(ctx.db, ctx.caller, path.id, body) }),
  removeMember: async ({ path }, ctx) => ({ data: await removeMember(ctx.db, ctx.caller, path.id) }),
  deleteInvitation: async ({ path }, ctx) => ({ data: await withdrawInvitation(ctx.db, ctx.caller, path.id) }),
  acceptInvitation: async ({ body }, ctx) => ({ data: await acceptInvitationByToken(ctx, body) }),
} satisfies Partial<Handlers<Ctx>>;
