/**
 * Custom domains of status pages. Control of a domain is proved by a DNS TXT
 * record `_vigil.<domain>` holding the page's token (`vigil-verify=…`),
 * looked up through the resolver Vigil's own lookups use (`DNS_RESOLVER`,
 * else the system's). Once verified, a request whose `Host` is the domain is
 * served the page at the root, and the on-demand TLS `ask` endpoint answers
 * 200 for it.
 */
import type { Selectable } from 'kysely';
import type { Caller } from '../auth/caller';
import type { Db } from '../db/connect';
import { cachedRows } from '../db/connect';
import type { StatusPagesTable } from '../db/schema';
import { CheckResolver, describeDnsError } from '../engine/dns/resolver';
import type { NetPolicy } from '../net/policy';
import { ApiError } from '../pipeline/errors';
import { audit } from '../domain/audit';
import { iso } from '../domain/tenancy';
import { visiblePage } from './repo';

/** The label under the domain that carries the proof. */
const RECORD_LABEL = '_vigil';
/** How long one verification lookup may take. */
const LOOKUP_MS = 10_000;

type DomainFields = Pick<Selectable<StatusPagesTable>, 'custom_domain' | 'domain_token' | 'domain_verified_at' | 'domain_checked_at' | 'domain_found' | 'domain_error'>;

/** The API shape of a page's domain proof; null without a custom domain. */
export function verificationOut(r: DomainFields) {
  if (!r.custom_domain || !r.domain_token) return null;
  return {
    domain: r.custom_domain, recordName: `${RECORD_LABEL}.${r.custom_domain}`, recordType: 'TXT' as const, recordValue: r.domain_token,
    verified: r.domain_verified_at !== null, verifiedAt: iso(r.domain_verified_at), checkedAt: iso(r.domain_checked_at),
    found: r.domain_found, error: r.domain_error,
  };
}

/**
 * Looks the TXT record up now and records what was found; sets
 * `domain_verified_at` the first time it matches. Never an error for a
 * missing or wrong record: the answer says so.
 */
export async function verifyDomain(db: Db, caller: Caller, id: string, resolverSpec: string | null, policy: NetPolicy) {
  const page = await visiblePage(db, caller, id);
  if (!page.custom_domain || !page.domain_token) {
    throw new ApiError(400, 'no_custom_domain', 'The page has no custom domain: set customDomain first.', {}, [{ field: 'customDomain', reason: 'not set' }]);
  }
  const name = `${RECORD_LABEL}.${page.custom_domain}`;
  let found: string[] = [];
  let error: string | null = null;
  try {
    const resolver = new CheckResolver(resolverSpec, policy, AbortSignal.timeout(LOOKUP_MS));
    found = (await resolver.txt(name)).slice(0, 10).map((v) => v.slice(0, 255));
    if (!found.includes(page.domain_token)) error = found.length ? `no TXT record at ${name} holds the expected value` : `no TXT record at ${name}`;
  } catch (e) {
    error = describeDnsError(e, name, 'TXT');
  }
  const now = new Date();
  const matched = error === null;
  const row = await db.transaction().execute(async (tx) => {
    const updated = await tx.updateTable('status_pages').set({
      domain_checked_at: now, domain_found: found, domain_error: error,
      ...(matched && !page.domain_verified_at ? { domain_verified_at: now } : {}),
    }).where('id', '=', id).where('custom_domain', '=', page.custom_domain).returningAll().executeTakeFirst();
    if (matched && !page.domain_verified_at && updated) {
      await audit(tx, caller, { action: 'status_page.domain_verified', resourceType: 'status_page', resourceId: id, workspaceId: page.workspace_id,
        changes: { domainVerifiedAt: { from: null, to: now.toISOString() } } });
    }
    return updated;
  });
  // The domain was changed meanwhile: report on what was asked.
  return verificationOut(row ?? { ...page, domain_checked_at: now, domain_found: found, domain_error: error })!;
}

/** Verified custom domains → page slug and visibility, for every process (cached until a page changes). */
async function verifiedDomains(db: Db): Promise<Map<string, { slug: string; visibility: string }>> {
  const rows = await cachedRows(db, 'status-page-domains', ['status_pages'], () => db.selectFrom('status_pages')
    .select(['custom_domain', 'slug', 'visibility']).where('custom_domain', 'is not', null).where('domain_verified_at', 'is not', null).execute());
  return new Map(rows.map((r) => [r.custom_domain!, { slug: r.slug, visibility: r.visibility }]));
}

/** The page of a verified custom domain named by `host` (port and trailing dot ignored), else undefined. */
async function pageOfDomain(db: Db, host: string | undefined) {
  if (!host) return undefined;
  const name = host.toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
  if (!name.includes('.')) return undefined;
  return (await verifiedDomains(db)).get(name);
}

/**
 * The slug of the page served at `host` (a verified custom domain; port and
 * trailing dot ignored), else null. A private page's domain still names it:
 * the page answers 404 there, and nothing else of Vigil is served on it.
 */
export async function pageForHost(db: Db, host: string | undefined): Promise<string | null> {
  return (await pageOfDomain(db, host))?.slug ?? null;
}

/**
 * Whether the on-demand TLS `ask` may say yes to `domain`: a verified custom
 * domain of a page that visitors can open there (public, or password: its
 * form needs the certificate too). A private page is served nowhere, so its
 * domain gets no certificate.
 */
export async function certificateAllowed(db: Db, domain: string | undefined): Promise<boolean> {
  const page = await pageOfDomain(db, domain);
  return page !== undefined && page.visibility !== 'private';
}
