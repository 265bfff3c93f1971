/**
 * The People reads (Settings → Members): kept apart from queries.ts so the
 * sections of Settings grow without touching one shared file. Workspaces
 * are read through `q.workspaces()` (queries.ts), which other pages share.
 */
import { queryOptions } from '@tanstack/react-query';
import { api, ok, type Schema } from './api';

export const peopleKeys = {
  /** Members and pending invitations: one read (GET /members answers both). */
  members: ['members'] as const,
};

export type Member = Schema<'Member'>;
export type Invitation = Schema<'Invitation'>;
export type Role = Schema<'InviteMemberBody'>['role'];

/** The roles, highest first, as the contract names them (the server decides who may grant which). */
export const ROLES: Array<[Role, string]> = [['owner', 'Owner'], ['admin', 'Admin'], ['member', 'Member'], ['viewer', 'Viewer']];
export const roleLabel = (role: string) => ROLES.find(([r]) => r === role)?.[1] ?? role;

export const qp = {
  /** The same cache entry as `q.members()` (queries.ts), whole. */
  members: () => queryOptions({ queryKey: peopleKeys.members, queryFn: () => ok(api.GET('/members')).then((r) => r.data) }),
};
