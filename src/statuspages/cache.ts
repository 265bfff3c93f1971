import { createHash } from 'node:crypto';
import zlib from 'node:zlib';
import type { ChangeClock } from '../db/changes';
import type { Db } from '../db/connect';
import { loadPageModel, type PageModel } from './model';

/**
 * Rendered status pages, per process. A page is loudest while something is
 * down, so a visit costs no database work: the page's model is read once and
 * every rendering of it (HTML, JSON, feeds, badge; plain and gzip) is made
 * once and kept until one of the tables it is made of changes (the change
 * clock: this process's writes at once, other processes' through
 * notifications) or, for the figures that change with every check (uptime
 * cells, response times), until `TTL_MS` has passed. While the change feed is
 * down, nothing is kept.
 */

/** What a page is made of; `monitor_status` changes only when a monitor's status does. */
const TABLES = ['status_pages', 'status_page_components', 'incidents', 'incident_events', 'maintenance_windows', 'monitor_status', 'hosts', 'monitor_hosts'];
/** How long a page's figures may lag behind the checks. */
const TTL_MS = 30_000;
/** Pages held at most; the least recently loaded go first. */
const MAX_PAGES = 2_000;

/** One rendering, ready to send. */
export interface Variant { body: Buffer; gzip: Buffer; etag: string; contentType: string; csp: string | null }

interface Entry { stamp: number | null; until: number; model: PageModel | null; variants: Map<string, Variant> }

/** Builds a variant from text. */
export function variant(text: string, contentType: string, csp: string | null = null): Variant {
  const body = Buffer.from(text, 'utf8');
  return { body, gzip: zlib.gzipSync(body, { level: 6 }), etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`, contentType, csp };
}

export class PageCache {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<Entry>>();
  /** Loads from the database, for the benchmark's and the tests' counting. */
  loads = 0;

  constructor(private readonly db: Db, private readonly clock: ChangeClock | null) {}

  private async entry(slug: string): Promise<Entry> {
    const stamp = this.clock?.stamp(TABLES) ?? null;
    const hit = this.entries.get(slug);
    if (hit && stamp !== null && hit.stamp === stamp && hit.until > Date.now()) return hit;
    const key = `${slug}\u0000${stamp}`;
    const pending = this.loading.get(key);
    if (pending) return pending;
    const promise = (async () => {
      this.loads++;
      const model = await loadPageModel(this.db, slug);
      const e: Entry = { stamp, until: Date.now() + TTL_MS, model, variants: new Map() };
      // Kept only when nothing it is made of changed while it was read.
      if (stamp !== null && this.clock?.stamp(TABLES) === stamp) {
        this.entries.delete(slug);
        this.entries.set(slug, e);
        if (this.entries.size > MAX_PAGES) this.entries.delete(this.entries.keys().next().value!);
      }
      return e;
    })().finally(() => this.loading.delete(key));
    this.loading.set(key, promise);
    return promise;
  }

  /** The page's model (null when there is no such page). */
  async model(slug: string): Promise<PageModel | null> {
    return (await this.entry(slug)).model;
  }

  /** One rendering of the page, made on first use and kept with its model. */
  async variant(slug: string, name: string, render: (m: PageModel) => Variant): Promise<Variant | null> {
    const e = await this.entry(slug);
    if (!e.model) return null;
    let v = e.variants.get(name);
    if (!v) {
      v = render(e.model);
      e.variants.set(name, v);
    }
    return v;
  }
}
