/**
 * The visitor of an event (docs/analytics.md): HMAC-SHA256 keyed with the
 * site's salt of the UTC day over the client IP, the user agent and the
 * site's domain, its first 8 bytes read as a signed 64-bit integer. Each
 * salt is kept as a KeyObject, made once, so an event costs one HMAC and no
 * key set-up. Salts are
 * 16 random bytes per site and day, made on first use by whichever process
 * comes first (`on conflict do nothing`, then read back, so every process
 * agrees), remembered per (site, day) in memory, and deleted after 48 h by
 * housekeeping: no key joins two days, so a visitor is unique per day and site.
 */
import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/connect';

/**
 * Where analytics takes "now" from: ingestion stamps events with it (and so
 * picks the day's salt), housekeeping ages salts, sessions and raw events by
 * it. Production never changes it; tests running Vigil in their own process
 * set it to move between days. No request can reach it.
 */
export const analyticsClock: { now(): Date } = { now: () => new Date() };

const DAY_MS = 86_400_000;
/** The UTC day last asked for, kept: nearly every call is about today. */
let dayFrom = 0;
let dayText = '1970-01-01';

/** `YYYY-MM-DD` of `at` in UTC. */
export function utcDay(at: Date): string {
  const ms = at.getTime();
  if (ms >= dayFrom && ms < dayFrom + DAY_MS) return dayText;
  const text = at.toISOString().slice(0, 10);
  if (Number.isFinite(ms)) {
    dayFrom = Math.floor(ms / DAY_MS) * DAY_MS;
    dayText = text;
  }
  return text;
}

/** The site vanished while its salt was made (deleted meanwhile): its events are dropped. */
export class SiteGone extends Error {}

/** A salt as the visitor hash takes it: its 16 bytes as an HMAC key, made once. */
export type SaltKey = KeyObject;

/** (site, day) salts remembered at most per process (32 bytes of salt and a key each). */
const MAX_SALTS = 100_000;

/** Per-site daily salts, from memory after the first use of each day. */
export class Salts {
  private readonly salts = new Map<string, SaltKey>();
  private readonly loading = new Map<string, Promise<SaltKey>>();
  /** Salts of past days looked up without making them (previous): null when there is none. */
  private readonly past = new Map<string, SaltKey | null | Promise<SaltKey | null>>();
  private today = '';

  constructor(private readonly db: Db) {}

  /** The salt of `siteId` for `day` when remembered (no promise: the path of nearly every event). */
  known(siteId: string, day: string): SaltKey | undefined {
    if (day !== this.today) this.rollOver(day);
    return this.salts.get(`${siteId}|${day}`);
  }

  /** The salt of `siteId` for `day` (`YYYY-MM-DD`), made now if it does not exist yet. */
  async of(siteId: string, day: string): Promise<SaltKey> {
    const hit = this.known(siteId, day);
    if (hit !== undefined) return hit;
    const key = `${siteId}|${day}`;
    let load = this.loading.get(key);
    if (!load) {
      load = this.load(siteId, day).then((salt) => {
        this.loading.delete(key);
        if (this.salts.size >= MAX_SALTS) this.salts.delete(this.salts.keys().next().value!);
        this.salts.set(key, salt);
        return salt;
      }, (e: unknown) => {
        this.loading.delete(key);
        throw e;
      });
      this.loading.set(key, load);
    }
    return load;
  }

  /**
   * The salt `siteId` had on `day` if it exists (a past day's: never made
   * now; none when the site had no event that day, or housekeeping deleted
   * it), without a promise once looked up.
   */
  existing(siteId: string, day: string): SaltKey | null | Promise<SaltKey | null> {
    const key = `${siteId}|${day}`;
    const hit = this.salts.get(key) ?? this.past.get(key);
    if (hit !== undefined) return hit;
    if (this.past.size >= MAX_SALTS) this.past.clear();
    const load = this.db.selectFrom('analytics_salts').select('salt').where('site_id', '=', siteId).where('day', '=', day).executeTakeFirst()
      .then((row) => {
        const salt = row ? createSecretKey(row.salt) : null;
        this.past.set(key, salt);
        return salt;
      }, (e: unknown) => {
        this.past.delete(key);
        throw e;
      });
    this.past.set(key, load);
    return load;
  }

  /** Forgets salts of days before yesterday (a late event may still name yesterday). */
  private rollOver(day: string): void {
    if (day < this.today) return;
    this.today = day;
    const yesterday = utcDay(new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000));
    for (const key of this.salts.keys()) if (key.slice(key.lastIndexOf('|') + 1) < yesterday) this.salts.delete(key);
    // Past salts looked up are yesterday's at most: a new day asks about a new yesterday (and a salt made since is not missed).
    this.past.clear();
  }

  private async load(siteId: string, day: string): Promise<SaltKey> {
    try {
      await sql`insert into analytics_salts (site_id, day, salt) values (${siteId}, ${day}::date, ${randomBytes(16)})
        on conflict (site_id, day) do nothing`.execute(this.db);
    } catch (e) {
      if ((e as { code?: string }).code === '23503') throw new SiteGone();
      throw e;
    }
    const row = await this.db.selectFrom('analytics_salts').select('salt').where('site_id', '=', siteId).where('day', '=', day).executeTakeFirst();
    if (!row) throw new SiteGone();
    return createSecretKey(row.salt);
  }
}

/** The visitor hash: a signed 64-bit integer, as a decimal string (exact; JavaScript numbers are not). */
export function visitorId(salt: SaltKey, ip: string, userAgent: string, domain: string): string {
  return createHmac('sha256', salt).update(`${ip}\u0000${userAgent}\u0000${domain}`).digest().readBigInt64BE(0).toString();
}
