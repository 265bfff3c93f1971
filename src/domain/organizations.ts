import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import { isRole } from '../auth/roles';
import { insertApiKey } from '../repo/apiKeys';
import { sql } from 'kysely';
import { findOrganization, findPlan, findUserByEmail, isEmpty } from '../repo/organizations';
import { hashPassword, PASSWORD_LENGTH } from '../crypto/passwords';

/** What creating an organisation hands back (the key's token is shown only here). */
export interface CreatedOrganization { organizationId: string; workspaceId: string; userId: string; membershipId: string; apiKey: string }

/** Operator-facing failure (CLI, bootstrap): a message, no HTTP status. */
export class OperatorError extends Error {}

async function userFor(db: Db, email: string) {
  const existing = await findUserByEmail(db, email);
  if (existing) return existing;
  return db.insertInto('users').values({ id: newId('usr'), email }).returningAll().executeTakeFirstOrThrow();
}

/**
 * Creates an organisation with its default workspace and an owner (a new or
 * existing person by e-mail), and mints the owner's first API key.
 */
export async function createOrganization(db: Db, input: { name: string; ownerEmail: string; plan?: string; withKey?: boolean }): Promise<CreatedOrganization> {
  const plan = input.plan ?? 'free';
  if (!(await findPlan(db, plan))) throw new OperatorError(`unknown plan "${plan}"`);
  if (!input.name.trim()) throw new OperatorError('the organisation needs a name');
  if (!/^[^@\s]+@[^@\s]+$/.test(input.ownerEmail)) throw new OperatorError(`"${input.ownerEmail}" is not an e-mail address`);
  return db.transaction().execute((tx) => insertOrganization(tx, input, plan));
}

/** The writes of `createOrganization`, inside the caller's transaction `tx`. */
async function insertOrganization(tx: Db, input: { name: string; ownerEmail: string; withKey?: boolean }, plan: string): Promise<CreatedOrganization> {
  const org = await tx.insertInto('organizations').values({ id: newId('org'), name: input.name.trim(), plan }).returning('id').executeTakeFirstOrThrow();
  const ws = await tx.insertInto('workspaces').values({
    id: newId('ws'), organization_id: org.id, name: 'Default', slug: 'default', is_default: true,
  }).returning('id').executeTakeFirstOrThrow();
  const user = await userFor(tx, input.ownerEmail);
  const ms = await tx.insertInto('memberships').values({
    id: newId('mem'), organization_id: org.id, user_id: user.id, role: 'owner', workspace_ids: null,
  }).returning('id').executeTakeFirstOrThrow();
  // Sign-up signs the owner in instead: no key nobody would ever see.
  const token = input.withKey === false ? '' : (await insertApiKey(tx, {
    organizationId: org.id, membershipId: ms.id, name: 'Owner key', scopes: [], workspaceIds: null, expiresAt: null,
  })).token;
  return { organizationId: org.id, workspaceId: ws.id, userId: user.id, membershipId: ms.id, apiKey: token };
}

/** The advisory lock of the first-start bootstrap: a constant no other lock of Vigil uses. */
const BOOTSTRAP_LOCK = 7_465_001_001;

/**
 * The first start of an empty database: creates an organisation and its
 * owner (owner@localhost) and mints the owner's key, which the caller prints
 * once. Processes started at once on the same empty database take turns on a
 * transaction-scoped advisory lock around "is it empty? then create", so
 * exactly one of them creates the organisation and gets the key; the others
 * get null, as every later start does.
 */
export async function bootstrapOrganization(db: Db, plan: string): Promise<CreatedOrganization | null> {
  if (!(await findPlan(db, plan))) throw new OperatorError(`unknown plan "${plan}"`);
  return db.transaction().execute(async (tx) => {
    await sql`select pg_advisory_xact_lock(${BOOTSTRAP_LOCK}::bigint)`.execute(tx);
    if (!(await isEmpty(tx))) return null;
    return insertOrganization(tx, { name: 'My organisation', ownerEmail: 'owner@localhost' }, plan);
  });
}

/**
 * Adds a person (new or existing by e-mail) to an organisation with `role`,
 * optionally confined to workspaces, and mints their first API key.
 */
export async function addMember(db: Db, input: { organizationId: string; email: string; role: string; workspaceIds?: string[] | null }) {
  if (!isRole(input.role)) throw new OperatorError(`unknown role "${input.role}" (owner, admin, member, viewer)`);
  if (!(await findOrganization(db, input.organizationId))) throw new OperatorError(`no organisation ${input.organizationId}`);
  if (!/^[^@\s]+@[^@\s]+$/.test(input.email)) throw new OperatorError(`"${input.email}" is not an e-mail address`);
  const confine = input.workspaceIds?.length ? input.workspaceIds : null;
  if (confine) {
    const found = await db.selectFrom('workspaces').select('id').where('organization_id', '=', input.organizationId).where('id', 'in', confine).execute();
    if (found.length !== confine.length) throw new OperatorError('a workspace named is not in that organisation');
  }
  return db.transaction().execute(async (tx) => {
    const user = await userFor(tx, input.email);
    const taken = await tx.selectFrom('memberships').select('id').where('organization_id', '=', input.organizationId).where('user_id', '=', user.id).executeTakeFirst();
    if (taken) throw new OperatorError(`${input.email} is already a member of that organisation`);
    const ms = await tx.insertInto('memberships').values({
      id: newId('mem'), organization_id: input.organizationId, user_id: user.id, role: input.role, workspace_ids: confine,
    }).returning('id').executeTakeFirstOrThrow();
    const { token } = await insertApiKey(tx, {
      organizationId: input.organizationId, membershipId: ms.id, name: `${input.role} key`, scopes: [], workspaceIds: null, expiresAt: null,
    });
    return { userId: user.id, membershipId: ms.id, apiKey: token };
  });
}

/** Sets the sign-in password of the person with `email` (operators and tests: `npm run cli -- user password`). */
export async function setPassword(db: Db, email: string, password: string): Promise<{ userId: string; email: string }> {
  if ([...password].length < PASSWORD_LENGTH.min || [...password].length > PASSWORD_LENGTH.max) {
    throw new OperatorError(`the password must be ${PASSWORD_LENGTH.min} to ${PASSWORD_LENGTH.max} characters`);
  }
  const user = await db.selectFrom('users').select(['id', 'email']).where((eb) => eb(eb.fn('lower', ['email']), '=', email.trim().toLowerCase())).executeTakeFirst();
  if (!user) throw new OperatorError(`no person with e-mail ${email}`);
  await db.updateTable('users').set({ password_hash: await hashPassword(password), password_changed_at: new Date() }).where('id', '=', user.id).execute();
  return { userId: user.id, email: user.email };
}
