/**
 * The People reads (Settings → Members): kept apart from queries.ts so the
 * sections of Settings grow without touching one shared file. Workspaces
 * are read through `q.workspaces()` (queries.ts), which other pages share.
 */
import type { Schema } from './api';
import { keys, q } from './queries';

export const peopleKeys = {
  /** Members and pending invitations: one read (GET /members answers both), the key queries.ts reads them under. */
  members: keys.members,
};

export type Member = Schema<'Member'>;
export type Invitation = Schema<'Invitation'>;
export type Role = Schema<'InviteMemberBody'>['role'];

/** The roles, highest first, as the contract names them (the server decides who may grant which). */
export const ROLES: Array<[Role, string]> = [['owner', 'Owner'], ['admin', 'Admin'], ['member', 'Member'], ['viewer', 'Viewer']];
export const roleLabel = (role: string) => ROLES.find(([r]) => r === role)?.[1] ?? role;

export const qp = {
  /** The same cache entry as `q.members()` (queries.ts), whole. */
  members: () => q.membersAndInvitations(),
};
