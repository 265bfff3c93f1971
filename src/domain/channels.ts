import type { Caller } from '../auth/caller';
import { requireWholeOrganisation } from '../auth/confinement';
import type { Db } from '../db/connect';
import { newId } from '../crypto/ids';
import { hashToken, newToken } from '../crypto/tokens';
import { ApiError, conflict, invalid, notFound } from '../pipeline/errors';
import type { Services } from '../pipeline/context';
import { channelKinds, isChannelKind } from '../alerting/channels';
import type { AlertMessage, ChannelKind, ChannelKindDef, ChannelSecrets, DeliveryResult, ParsedTarget } from '../alerting/channels/channel';
import { alertText } from '../alerting/channels/text';
import { deliveryContext } from '../alerting/context';
import { selectChannels, type ChannelRow } from '../repo/channels';
import { audit, diff, type Change } from './audit';
import { findMonitor } from './monitors';
import { iso, visibleWorkspace } from './tenancy';

/**
 * Notification channels.
 *
 * Storage: `target` holds the display form (credentials masked by the kind),
 * `target_enc` the real target sealed, `secret_enc` a webhook's signing key
 * sealed, `config` the kind's non-secret config. A confirmation link's token
 * is stored only as its SHA-256.
 *
 * Tenancy: a key confined to workspaces sees organisation-wide channels and
 * its own workspaces' channels. It may change (switch, rename, retarget,
 * delete, test, resend the confirmation of) only channels of its workspaces:
 * an organisation-wide channel answers 403 `workspace_confined`, as does
 * creating one.
 */

/** Fields of a channel the audit log keeps (never the real target, the secret or a token). */
const AUDITED = ['kind', 'name', 'target', 'workspaceId', 'enabled', 'confirmed'];

/** The secret-free services a channel operation needs. */
type ChannelServices = Pick<Services, 'secrets' | 'config' | 'net' | 'baseUrl'>;

function kindOf(row: ChannelRow): ChannelKindDef | null {
  return isChannelKind(row.kind) ? channelKinds[row.kind] : null;
}

/** The real target, secret and config of a stored channel, decrypted; null when they cannot be decrypted. */
function unseal(services: Pick<Services, 'secrets'>, row: ChannelRow): ChannelSecrets | null {
  // Rows from before targets were sealed keep the real target in `target`.
  const target = row.target_enc !== null ? services.secrets.open(row.target_enc) : row.target;
  const secret = row.secret_enc !== null ? services.secrets.open(row.secret_enc) : null;
  if (target === null || (row.secret_enc !== null && secret === null)) return null;
  return { id: row.id, name: row.name, target, secret, config: row.config ?? {} };
}

/** True when the channel holds a secret: a signing key, or a target that is a credential by itself. */
function secretStored(services: Pick<Services, 'secrets'>, row: ChannelRow): boolean {
  if (row.secret_enc !== null) return true;
  const def = kindOf(row);
  const real = row.target_enc !== null ? services.secrets.open(row.target_enc) : null;
  if (!def || real === null) return row.target_enc !== null && real === null;
  try {
    return def.parseTarget(real).secretStored;
  } catch {
    // The kind's rules changed since it was stored: a masked display means a credential.
    return real !== row.target;
  }
}

/** The API shape of a channel: display target, non-secret config, owner. Never the secret. */
export function channelOut(services: Pick<Services, 'secrets'>, row: ChannelRow) {
  return {
    id: row.id,
    kind: row.kind as ChannelKind,
    name: row.name,
    target: row.target,
    workspaceId: row.workspace_id,
    enabled: row.enabled,
    confirmed: row.confirmed_at !== null,
    owner: row.owner_user_id !== null ? { userId: row.owner_user_id, email: row.owner_email!, name: row.owner_name ?? null } : null,
    config: JSON.stringify(row.config ?? {}),
    secretStored: secretStored(services, row),
    createdAt: iso(row.created_at)!,
  };
}

function audited(row: ChannelRow) {
  return { kind: row.kind, name: row.name, target: row.target, workspaceId: row.workspace_id, enabled: row.enabled, confirmed: row.confirmed_at !== null };
}

const filterOf = (caller: Caller) => ({ organizationId: caller.organizationId, workspaceIds: caller.workspaceIds });

/** One channel visible to the caller, or 404 (another organisation's channel included). */
export async function findChannel(db: Db, caller: Caller, id: string): Promise<ChannelRow> {
  const row = await selectChannels(db, { ...filterOf(caller), id }).executeTakeFirst();
  if (!row) throw notFound('channel', 'id');
  return row;
}

/** Refuses a change to an organisation-wide channel by a key confined to workspaces. */
function requireManageable(caller: Caller, row: ChannelRow): void {
  if (row.workspace_id === null) requireWholeOrganisation(caller, 'notification_channel:manage', 'change an organisation-wide channel');
}

/** The channels the caller can see, by name. */
export async function listChannels(db: Db, services: Pick<Services, 'secrets'>, caller: Caller) {
  const rows = await selectChannels(db, filterOf(caller)).execute();
  return rows.map((r) => channelOut(services, r));
}

export interface CreateChannelInput { kind: string; name: string; target: string; workspaceId?: string | null }

/** A new confirmation token: the link's token and the hash stored for it. */
function confirmationToken(): { token: string; hash: Buffer } {
  const { token } = newToken('cfm');
  return { token, hash: hashToken(token) };
}

/** Sends a confirmation link through the kind; a throw is a failed send with its words. */
async function sendConfirmation(services: ChannelServices, def: ChannelKindDef, ch: ChannelSecrets, token: string): Promise<DeliveryResult> {
  const link = `${services.baseUrl()}/confirm/${token}`;
  try {
    return await def.sendConfirmation!(ch, link, deliveryContext(services));
  } catch (e) {
    return { delivered: false, error: e instanceof Error ? e.message : String(e) };
  }
}

/**
 * Creates a channel: the kind validates the target; a webhook gets a signing
 * secret shown this once; an email channel is created unconfirmed and its
 * address gets one confirmation message now (a failed send still creates the
 * channel: the confirmation can be sent again); other kinds are confirmed.
 */
export async function createChannel(db: Db, services: ChannelServices, caller: Caller, input: CreateChannelInput) {
  if (!isChannelKind(input.kind) || !channelKinds[input.kind].creatable) {
    throw invalid('kind', 'must be one of email, webhook, telegram, slack, teams, discord, pagerduty, jsm (sms, whatsapp, satellite and push are enrolled by their recipient)');
  }
  const kind = input.kind;
  const def = channelKinds[kind];
  const name = input.name.trim();
  if (!name || name.length > 100) throw invalid('name', 'must be 1 to 100 characters');
  let workspaceId: string | null = null;
  if (input.workspaceId === undefined || input.workspaceId === null) {
    requireWholeOrganisation(caller, 'notification_channel:manage', 'create an organisation-wide channel (name one of its workspaces)', 'workspaceId');
  } else {
    workspaceId = (await visibleWorkspace(db, caller, input.workspaceId)).id;
  }
  const parsed = def.parseTarget(input.target);
  const secret = def.hasSecret ? newToken('whsec').token : null;
  const confirm = def.needsConfirmation ? confirmationToken() : null;
  const id = newId('ch');
  await db.transaction().execute(async (tx) => {
    await tx.insertInto('notification_channels').values({
      id, organization_id: caller.organizationId, workspace_id: workspaceId, owner_membership_id: caller.membershipId,
      kind, name, target: parsed.display, enabled: true, confirmed_at: confirm ? null : new Date(),
      target_enc: services.secrets.seal(parsed.target), secret_enc: secret === null ? null : services.secrets.seal(secret),
      config: JSON.stringify(parsed.config ?? {}), confirmation_token_hash: confirm?.hash ?? null,
    }).execute();
    await audit(tx, caller, { action: 'channel.created', resourceType: 'notification_channel', resourceId: id, workspaceId,
      changes: diff(null, { kind, name, target: parsed.display, workspaceId, enabled: true, confirmed: !confirm }, AUDITED) });
  });
  if (confirm && def.sendConfirmation) {
    const ch: ChannelSecrets = { id, name, target: parsed.target, secret, config: parsed.config ?? {} };
    const sent = await sendConfirmation(services, def, ch, confirm.token);
    if (sent.delivered) await db.updateTable('notification_channels').set({ confirmation_sent_at: new Date() }).where('id', '=', id).execute();
  }
  return { ...channelOut(services, await findChannel(db, caller, id)), secret };
}

export interface UpdateChannelInput { enabled?: boolean; name?: string; target?: string }

/**
 * Changes a channel's `enabled`, `name` and `target` (any of them; none is
 * 400 `empty_change`). The target is validated by the kind exactly as on
 * create, and a target equal to the real one changes nothing. A changed
 * address of a kind that needs confirmation (email) is unconfirmed again:
 * the old link stops working and the new address gets one confirmation
 * message, as on create (a failed send still changes the channel). A
 * webhook's secret is untouched. A disabled channel keeps its place on
 * monitors.
 */
export async function updateChannel(db: Db, services: ChannelServices, caller: Caller, id: string, input: UpdateChannelInput) {
  if (input.enabled === undefined && input.name === undefined && input.target === undefined) {
    throw new ApiError(400, 'empty_change', 'The request changes nothing: name at least one of enabled, name and target.', {}, [{ field: 'body', reason: 'names no field' }]);
  }
  const name = input.name?.trim();
  if (name !== undefined && (!name || [...name].length > 100)) throw invalid('name', 'must be 1 to 100 characters');
  const before = await findChannel(db, caller, id);
  requireManageable(caller, before);
  const def = kindOf(before);
  let retarget: { parsed: ParsedTarget; confirm: { token: string; hash: Buffer } | null } | null = null;
  if (input.target !== undefined) {
    if (!def?.creatable) {
      throw invalid('target', `the target of a ${before.kind} channel is enrolled by its recipient and cannot be changed through the API`, 'target_not_changeable');
    }
    const parsed = def.parseTarget(input.target);
    const current = unseal(services, before)?.target ?? null;
    if (parsed.target !== current) retarget = { parsed, confirm: def.needsConfirmation ? confirmationToken() : null };
  }
  const after = {
    ...audited(before),
    ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(retarget ? { target: retarget.parsed.display, confirmed: retarget.confirm ? false : audited(before).confirmed } : {}),
  };
  const changes = diff(audited(before), after, AUDITED);
  // The real target is audited only as the fact that it changed (a masked display may not show it).
  if (retarget && !changes.target) changes.target = { changed: true };
  if (Object.keys(changes).length === 0) return { ok: true as const };
  const changed = await db.transaction().execute(async (tx) => {
    const r = await tx.updateTable('notification_channels').set({
      ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
      ...(name !== undefined ? { name } : {}),
      ...(retarget ? {
        target: retarget.parsed.display, target_enc: services.secrets.seal(retarget.parsed.target), config: JSON.stringify(retarget.parsed.config ?? {}),
        ...(retarget.confirm ? { confirmed_at: null, confirmation_token_hash: retarget.confirm.hash, confirmation_sent_at: null } : {}),
      } : {}),
    }).where('id', '=', id).where('organization_id', '=', caller.organizationId).executeTakeFirst();
    // Deleted since it was read: nothing to change or record.
    if (Number(r.numUpdatedRows) === 0) return false;
    await audit(tx, caller, { action: 'channel.updated', resourceType: 'notification_channel', resourceId: id, workspaceId: before.workspace_id, changes });
    return true;
  });
  if (!changed) throw notFound('channel', 'id');
  if (retarget?.confirm && def?.sendConfirmation) {
    const ch: ChannelSecrets = { id, name: name ?? before.name, target: retarget.parsed.target, secret: null, config: retarget.parsed.config ?? {} };
    const sent = await sendConfirmation(services, def, ch, retarget.confirm.token);
    if (sent.delivered) await db.updateTable('notification_channels').set({ confirmation_sent_at: new Date() }).where('id', '=', id).execute();
  }
  return { ok: true as const };
}

/** Deletes a channel and its monitor links; past deliveries keep their history with no channel. */
export async function deleteChannel(db: Db, caller: Caller, id: string) {
  const before = await findChannel(db, caller, id);
  requireManageable(caller, before);
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('monitor_channels').where('channel_id', '=', id).execute();
    await tx.deleteFrom('notification_channels').where('id', '=', id).where('organization_id', '=', caller.organizationId).execute();
    await audit(tx, caller, { action: 'channel.deleted', resourceType: 'notification_channel', resourceId: id, workspaceId: before.workspace_id,
      changes: diff(audited(before), null, AUDITED) });
  });
  return { id, deleted: true as const };
}

/**
 * Issues a new confirmation link and sends it. The channel is resolved first
 * (404 for one the caller cannot see), then `notification_channel:manage` is
 * required. `sent: false` when there is nothing to send; a provider refusal
 * is 502 `confirmation_not_sent`, with the token rotated all the same.
 */
export async function resendConfirmation(db: Db, services: ChannelServices, caller: Caller, id: string, require: (p: 'notification_channel:manage') => void) {
  const row = await findChannel(db, caller, id);
  require('notification_channel:manage');
  requireManageable(caller, row);
  const def = kindOf(row);
  if (row.confirmed_at !== null || !def?.needsConfirmation || !def.sendConfirmation) return { sent: false };
  const ch = unseal(services, row);
  if (!ch) throw new ApiError(502, 'confirmation_not_sent', 'The channel\'s address can no longer be decrypted; delete it and create it again.');
  const confirm = confirmationToken();
  await db.transaction().execute(async (tx) => {
    await tx.updateTable('notification_channels').set({ confirmation_token_hash: confirm.hash })
      .where('id', '=', id).where('organization_id', '=', caller.organizationId).execute();
    const changes: Record<string, Change> = { confirmationLink: { changed: true } };
    await audit(tx, caller, { action: 'channel.confirmation_sent', resourceType: 'notification_channel', resourceId: id, workspaceId: row.workspace_id, changes });
  });
  const sent = await sendConfirmation(services, def, ch, confirm.token);
  if (!sent.delivered) {
    const reason = sent.error ?? 'the provider refused the message';
    throw new ApiError(502, 'confirmation_not_sent', `The confirmation message could not be sent: ${reason}`, { reason });
  }
  await db.updateTable('notification_channels').set({ confirmation_sent_at: new Date() }).where('id', '=', id).execute();
  return { sent: true };
}

/**
 * Sends a test alert through the channel now, disabled or not. An unconfirmed
 * channel is refused (409 `channel_not_confirmed`); a failed delivery is an
 * answer, not an error: `delivered: false` with the provider's words.
 */
export async function testChannel(db: Db, services: ChannelServices, caller: Caller, id: string, now: Date) {
  const row = await findChannel(db, caller, id);
  requireManageable(caller, row);
  if (row.confirmed_at === null) {
    throw conflict('channel_not_confirmed', 'This channel\'s address has not agreed to receive alerts yet: follow the confirmation link first.', { channelId: id });
  }
  const def = kindOf(row);
  if (!def) return { delivered: false, error: `Unknown channel kind ${row.kind}.` };
  const ch = unseal(services, row);
  if (!ch) return { delivered: false, error: 'The channel\'s target can no longer be decrypted; delete it and create it again.' };
  const message: AlertMessage = {
    id: newId('dlv'), event: 'test', incident: null, errorIssue: null,
    text: alertText('test', null),
    occurredAt: now.toISOString(),
  };
  let result: DeliveryResult;
  try {
    result = await def.deliver(ch, message, deliveryContext(services));
  } catch (e) {
    result = { delivered: false, error: e instanceof Error ? e.message : String(e) };
  }
  return { delivered: result.delivered, error: result.delivered ? null : (result.error ?? 'The delivery failed.') };
}

/**
 * Confirms the channel whose link carries `token` (no caller: the link is the
 * credential). Null for an unknown, used or rotated token.
 */
export async function confirmByToken(db: Db, token: string): Promise<{ target: string } | null> {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(token)) return null;
  return db.transaction().execute(async (tx) => {
    const row = await tx.updateTable('notification_channels').set({ confirmed_at: new Date(), confirmation_token_hash: null })
      .where('confirmation_token_hash', '=', hashToken(token))
      .returning(['id', 'organization_id', 'workspace_id', 'kind', 'name', 'target'])
      .executeTakeFirst();
    if (!row) return null;
    const recipient = { organizationId: row.organization_id, actor: { type: 'system' as const, id: 'confirmation_link', name: 'Recipient (confirmation link)' } };
    await audit(tx, recipient as Caller, { action: 'channel.confirmed', resourceType: 'notification_channel', resourceId: row.id, workspaceId: row.workspace_id,
      changes: { confirmed: { from: false, to: true } } });
    return { target: row.target };
  });
}

/** The channels that alert for a monitor the caller can see, by name. */
export async function listMonitorChannels(db: Db, services: Pick<Services, 'secrets'>, caller: Caller, monitorId: string) {
  await findMonitor(db, caller, monitorId);
  const rows = await selectChannels(db, { ...filterOf(caller), monitorId }).execute();
  return rows.map((r) => channelOut(services, r));
}

/**
 * Replaces the whole set of channels of a monitor; null or [] alerts nobody.
 * Each id must be a channel the caller can see that is organisation-wide or in
 * the monitor's workspace, else 400 naming `channelIds.<index>`.
 */
export async function setMonitorChannels(db: Db, services: Pick<Services, 'secrets'>, caller: Caller, monitorId: string, channelIds: readonly string[] | null) {
  const monitor = await findMonitor(db, caller, monitorId);
  const wanted = channelIds ?? [];
  await db.transaction().execute(async (tx) => {
    // One replacement at a time per monitor.
    await tx.selectFrom('monitors').select('id').where('id', '=', monitorId).forUpdate().execute();
    const found = await tx.selectFrom('notification_channels').select(['id', 'workspace_id'])
      .where('organization_id', '=', caller.organizationId).where('id', 'in', wanted.length ? [...wanted] : [''])
      .forShare().execute();
    const usable = new Set(found.filter((c) => c.workspace_id === null || c.workspace_id === monitor.workspace_id).map((c) => c.id));
    wanted.forEach((cid, i) => {
      if (!usable.has(cid)) throw invalid(`channelIds.${i}`, 'no such channel in this organisation-wide scope or the monitor\'s workspace', 'unknown_channel');
    });
    const ids = [...new Set(wanted)];
    const before = (await tx.selectFrom('monitor_channels').select('channel_id').where('monitor_id', '=', monitorId).execute()).map((r) => r.channel_id).sort();
    await tx.deleteFrom('monitor_channels').where('monitor_id', '=', monitorId).execute();
    if (ids.length) {
      await tx.insertInto('monitor_channels').values(ids.map((channel_id) => ({ monitor_id: monitorId, channel_id })))
        .onConflict((oc) => oc.doNothing()).execute();
    }
    const changes = diff({ channelIds: before }, { channelIds: [...ids].sort() }, ['channelIds']);
    if (Object.keys(changes).length) {
      await audit(tx, caller, { action: 'monitor.channels_set', resourceType: 'monitor', resourceId: monitorId, workspaceId: monitor.workspace_id, changes });
    }
  });
  return listMonitorChannels(db, services, caller, monitorId);
}
