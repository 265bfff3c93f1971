/**
 * Subscribers of a status page. A visitor subscribes an e-mail address
 * (double opt-in: one confirmation message, nothing else until its link is
 * followed) or a webhook URL (confirmed at once; its URL is sealed at rest and
 * only its host is ever shown). Every message carries an unsubscribe link
 * signed with the master key, so no token needs storing for it.
 *
 * A webhook is named by an anonymous visitor, so it is held to the strict
 * outbound policy (public addresses only, whatever CHECKS_ALLOW_PRIVATE says):
 * when it is named here and again at every delivery (news.ts), since what a
 * name resolves to can change in between.
 */
import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import type { SecretBox } from '../crypto/secrets';
import { newId } from '../crypto/ids';
import { hashToken, newToken } from '../crypto/tokens';
import { ApiError, invalid, notFound } from '../pipeline/errors';
import type { Services } from '../pipeline/context';
import { parseEmailAddress, sendMail } from '../alerting/channels/email';
import { parseHttpUrl } from '../alerting/channels/url';
import { checkHost, STRICT_POLICY } from '../net/policy';
import { deliveryContext } from '../alerting/context';
import { audit } from '../domain/audit';
import { iso } from '../domain/tenancy';
import { translator } from './i18n';
import type { PageModel } from './model';
import { visiblePage } from './repo';

const TOKEN_KIND = 'sc';
/** A confirmation message is sent again for the same address at most this often. */
const RESEND_MS = 60_000;
const UNSUBSCRIBE = 'status-page-unsubscribe';

/** The page-relative links of a subscriber: where to confirm, where to leave. */
export function unsubscribeUrl(secrets: SecretBox, baseUrl: string, slug: string, subscriberId: string): string {
  return `${baseUrl}/status/${slug}/unsubscribe/${subscriberId}/${secrets.sign(UNSUBSCRIBE, subscriberId)}`;
}

function confirmUrl(baseUrl: string, slug: string, token: string): string {
  return `${baseUrl}/status/${slug}/subscribers/confirm/${token}`;
}

/**
 * A subscriber webhook's URL if its form is acceptable: http or https, a host,
 * at most 2,048 characters (parseHttpUrl), and no user name or password (a
 * visitor's credentials are not ours to store or send). Throws 400
 * `invalid_field` on `field`. Checks the form only; `checkWebhookAddress` checks
 * where it leads.
 */
export function parseWebhookUrl(raw: string, field = 'webhook'): URL {
  const url = parseHttpUrl(raw, 'an http:// or https:// URL', field);
  if (url.username || url.password) throw invalid(field, 'must not carry a user name or password');
  return url;
}

/**
 * Refuses (400 `webhook_not_public` on `field`) a webhook whose host is not a
 * public address under the strict policy: an address literal of loopback,
 * private, link-local, CGNAT, multicast, unspecified or metadata space (IPv4-
 * mapped forms too), or a name that does not resolve to public addresses only.
 * Resolves the name but never connects, so subscribing probes nothing; and one
 * answer for every refusal, naming no address, so it tells nothing of the
 * server's network either.
 */
export async function checkWebhookAddress(url: URL, field = 'webhook'): Promise<void> {
  try {
    await checkHost(STRICT_POLICY, url.hostname);
  } catch {
    throw invalid(field, 'must lead to a public internet address (a name must resolve to public addresses only)', 'webhook_not_public');
  }
}

/** What a subscription came to, for the answer. */
export type Subscribed = { kind: 'email'; address: string } | { kind: 'webhook'; host: string };

/**
 * Subscribes `email` or `webhook` (exactly one) to the page. The answer is
 * the same whether the address was new, waiting for confirmation or already
 * subscribed, so it tells nobody who else is on the list.
 */
export async function subscribe(db: Db, services: Services, m: PageModel, input: { email?: string; webhook?: string }): Promise<Subscribed> {
  if (!m.page.subscribersEnabled) throw new ApiError(403, 'subscriptions_closed', 'This status page does not take subscriptions.');
  const email = input.email?.trim() || '';
  const webhook = input.webhook?.trim() || '';
  if (!email === !webhook) {
    throw new ApiError(400, 'missing_field', 'Send an e-mail address or a webhook URL (one of them).', { field: 'email' }, [{ field: 'email', reason: 'email or webhook is required' }]);
  }
  if (webhook) {
    const url = parseWebhookUrl(webhook);
    await checkWebhookAddress(url);
    await db.insertInto('status_page_subscribers').values({
      id: newId('sub'), page_id: m.page.id, organization_id: m.page.organizationId, kind: 'webhook', target: url.host,
      target_enc: services.secrets.seal(url.href), target_key: hashToken(url.href).toString('base64url'), confirmed_at: new Date(),
    }).onConflict((oc) => oc.columns(['page_id', 'kind', 'target_key']).doNothing()).execute();
    return { kind: 'webhook', host: url.host };
  }
  const address = parseEmailAddress(email, 'email');
  const { token } = newToken(TOKEN_KIND);
  const now = new Date();
  const row = await db.insertInto('status_page_subscribers').values({
    id: newId('sub'), page_id: m.page.id, organization_id: m.page.organizationId, kind: 'email', target: address, target_key: address.toLowerCase(),
    confirm_token_hash: hashToken(token), confirm_sent_at: now,
  }).onConflict((oc) => oc.columns(['page_id', 'kind', 'target_key']).doUpdateSet({ confirm_token_hash: hashToken(token), confirm_sent_at: now })
    // Confirmed addresses are left alone; an unconfirmed one gets a new link, at most once a minute.
    .where('status_page_subscribers.confirmed_at', 'is', null)
    .where((eb) => eb.or([eb('status_page_subscribers.confirm_sent_at', 'is', null), eb('status_page_subscribers.confirm_sent_at', '<', new Date(now.getTime() - RESEND_MS))])))
    .returning('id').executeTakeFirst();
  if (!row) return { kind: 'email', address };
  const t = translator(m.page.language);
  const base = services.baseUrl();
  const result = await sendMail(address, deliveryContext(services), {
    subject: t('mail.confirmSubject', { page: m.page.name }),
    text: [t('mail.confirmText', { page: m.page.name }), confirmUrl(base, m.page.slug, token), '', t('mail.confirmIgnore')].join('\n'),
    headers: { 'Auto-Submitted': 'auto-generated' },
  });
  if (!result.delivered) {
    throw new ApiError(502, 'confirmation_not_sent', 'The confirmation message could not be sent; try again later.', {}, [{ field: 'email', reason: 'the mail server refused it' }]);
  }
  return { kind: 'email', address };
}

/** Follows a confirmation link: the address receives updates from now on. Null for an unknown, used or replaced link. */
export async function confirmSubscription(db: Db, slug: string, token: string): Promise<{ address: string } | null> {
  if (!token.startsWith(`${TOKEN_KIND}_`)) return null;
  const row = await db.updateTable('status_page_subscribers').set({ confirmed_at: new Date(), confirm_token_hash: null })
    .where('confirm_token_hash', '=', hashToken(token))
    .where('page_id', '=', (eb) => eb.selectFrom('status_pages').select('id').where('slug', '=', slug))
    .returning('target').executeTakeFirst();
  return row ? { address: row.target } : null;
}

/** Who an unsubscribe link is for (checks its signature); null when it is not valid or the subscriber is gone. */
export async function subscriberForLink(db: Db, secrets: SecretBox, slug: string, id: string, mac: string) {
  if (!secrets.verify(UNSUBSCRIBE, id, mac)) return null;
  const row = await db.selectFrom('status_page_subscribers as s').innerJoin('status_pages as p', 'p.id', 's.page_id')
    .select(['s.id', 's.kind', 's.target']).where('s.id', '=', id).where('p.slug', '=', slug).executeTakeFirst();
  return row ?? null;
}

/** Ends a subscription named by a valid link; idempotent. */
export async function unsubscribe(db: Db, id: string): Promise<void> {
  await db.deleteFrom('status_page_subscribers').where('id', '=', id).execute();
}

function subscriberOut(r: { id: string; kind: string; target: string; confirmed_at: Date | null; created_at: Date }) {
  return { id: r.id, kind: r.kind as 'email' | 'webhook', target: r.target, confirmed: r.confirmed_at !== null, confirmedAt: iso(r.confirmed_at), createdAt: iso(r.created_at)! };
}

/** The page's subscribers, newest first (GET /status-pages/{id}/subscribers). */
export async function listSubscribers(db: Db, caller: Caller, pageId: string) {
  await visiblePage(db, caller, pageId);
  const rows = await db.selectFrom('status_page_subscribers').select(['id', 'kind', 'target', 'confirmed_at', 'created_at'])
    .where('page_id', '=', pageId).orderBy('created_at', 'desc').orderBy('id').execute();
  return rows.map(subscriberOut);
}

/** Removes one subscriber (query `subscriber` or body `subscriberId`). */
export async function removeSubscriber(db: Db, caller: Caller, pageId: string, subscriberId: string | undefined) {
  if (!subscriberId) throw new ApiError(400, 'missing_field', 'Name the subscriber: query `subscriber` or body `subscriberId`.', { field: 'subscriberId' }, [{ field: 'subscriberId', reason: 'is required' }]);
  const page = await visiblePage(db, caller, pageId);
  await db.transaction().execute(async (tx) => {
    const gone = await tx.deleteFrom('status_page_subscribers').where('id', '=', subscriberId).where('page_id', '=', pageId)
      .returning(['id', 'kind']).executeTakeFirst();
    if (!gone) throw notFound('subscriber', 'subscriberId');
    await audit(tx, caller, { action: 'status_page.subscriber_removed', resourceType: 'status_page', resourceId: pageId, workspaceId: page.workspace_id,
      changes: { subscriber: { from: { id: gone.id, kind: gone.kind }, to: null } } });
  });
  return { id: subscriberId, deleted: true as const };
}
