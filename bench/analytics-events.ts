/**
 * The traffic of the analytics ingestion benchmark (bench/analytics.ts, part
 * a): requests as `@plausible-analytics/tracker` 0.4.6 sends them to
 * `POST /api/event` — `Content-Type: text/plain`, the body
 * `{"n","v":36,"u","d","r","p"?,"i"?:false}` — from a pool of visitors, each
 * with its own client address (sent as `X-Forwarded-For`, which Vigil takes
 * behind TRUST_PROXY=loopback) and browser user agent.
 *
 * - Visitors: BENCH_VISITORS (20,000), picked with a skew (a few come back
 *   often, most once or twice). Addresses: public IPv4 spread over the whole
 *   space (private, loopback, CGNAT and multicast ranges skipped), one in ten
 *   IPv6 under RIPE/ARIN/APNIC/LACNIC prefixes, so DB-IP finds many countries.
 * - User agents: ~250 distinct strings of current browsers (Chrome, Safari,
 *   Firefox, Edge, Samsung Internet, Opera on Windows, macOS, Linux, Chrome
 *   OS, Android, iOS, iPadOS; phones, tablets, desktops), weighted roughly as
 *   browser market shares; none is a bot (checked with Vigil's own parser).
 * - Pages: 300 paths, Zipf-distributed (rank r with probability ∝ 1/r);
 *   8% of page URLs carry utm_source/medium/campaign, a few other queries
 *   or a fragment.
 * - Referrers: a visitor's first page has an external referrer (search,
 *   social, news, 30 hosts) or none; later pages the site's own previous
 *   page (which Vigil counts as none), as `document.referrer` is.
 * - Events: 92% pageviews; 8% custom events (Signup, Outbound Link: Click,
 *   File Download, Form: Submission, Purchase, Video Play with `i:false`),
 *   with props.
 */
import { parseAgent } from '../src/analytics/ua';

/** A uniform [0, 1) generator from a 32-bit seed (mulberry32): the traffic is the same from run to run. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Picks from `[item, weight]` pairs. */
function weighted<T>(pairs: [T, number][], r: () => number): () => T {
  const total = pairs.reduce((a, [, w]) => a + w, 0);
  const cum: number[] = [];
  let acc = 0;
  for (const [, w] of pairs) cum.push((acc += w / total));
  return () => {
    const u = r();
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return pairs[lo][0];
  };
}

/** Rank 0..n-1 with probability ∝ 1/(rank+1) (Zipf, s = 1), from a uniform u. */
export function zipf(n: number, u: number): number {
  return Math.min(n - 1, Math.floor(Math.exp(u * Math.log(n + 1))) - 1);
}

/** ~250 browser user agents with weights (of market-share order). */
export function userAgents(): [string, number][] {
  const out: [string, number][] = [];
  const chrome = [124, 125, 126, 127, 128, 129, 130, 131];
  const ff = [115, 125, 128, 130, 131, 132, 133];
  const safari = ['16.6', '17.0', '17.4', '17.5', '17.6', '18.0', '18.1', '18.2'];
  const ios = ['16_7_10', '17_4_1', '17_5_1', '17_6_1', '18_0', '18_0_1', '18_1', '18_1_1', '18_2'];
  const android = [
    ['10', 'K'], ['13', 'SM-S911B'], ['14', 'SM-S921B'], ['14', 'SM-A546B'], ['13', 'SM-A536B'], ['14', 'Pixel 8'], ['14', 'Pixel 7a'],
    ['13', 'M2101K6G'], ['14', '23090RA98G'], ['12', 'moto g(60)'], ['14', 'CPH2581'], ['13', 'RMX3630'],
  ];
  const tablets = [['13', 'SM-X200'], ['14', 'SM-X710'], ['12', 'Lenovo TB-X306F']];
  for (const v of chrome) {
    const w = v >= 129 ? 3 : 1;
    out.push([`Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${v}.0.0.0 Safari/537.36`, 14 * w]);
    out.push([`Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${v}.0.0.0 Safari/537.36`, 6 * w]);
    out.push([`Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${v}.0.0.0 Safari/537.36`, 1 * w]);
    out.push([`Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${v}.0.0.0 Safari/537.36`, 0.5 * w]);
    out.push([`Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${v}.0.0.0 Safari/537.36 Edg/${v}.0.0.0`, 4 * w]);
    out.push([`Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${v}.0.0.0 Safari/537.36 OPR/${v - 14}.0.0.0`, 0.6 * w]);
    for (const [a, model] of android) {
      out.push([`Mozilla/5.0 (Linux; Android ${a}; ${model}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${v}.0.0.0 Mobile Safari/537.36`, 1.6 * w]);
    }
    for (const [a, model] of tablets) {
      out.push([`Mozilla/5.0 (Linux; Android ${a}; ${model}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${v}.0.0.0 Safari/537.36`, 0.3 * w]);
    }
    out.push([`Mozilla/5.0 (Linux; Android 14; SM-S921B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/${(v - 101) / 1}.0 Chrome/${v}.0.0.0 Mobile Safari/537.36`, 1.2 * w]);
    out.push([`Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/${v}.0.6778.73 Mobile/15E148 Safari/604.1`, 1 * w]);
  }
  for (const v of ff) {
    const w = v >= 131 ? 3 : 1;
    out.push([`Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:${v}.0) Gecko/20100101 Firefox/${v}.0`, 3 * w]);
    out.push([`Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:${v}.0) Gecko/20100101 Firefox/${v}.0`, 1 * w]);
    out.push([`Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:${v}.0) Gecko/20100101 Firefox/${v}.0`, 1 * w]);
    out.push([`Mozilla/5.0 (Android 14; Mobile; rv:${v}.0) Gecko/${v}.0 Firefox/${v}.0`, 0.4 * w]);
  }
  for (const v of safari) {
    const w = v >= '17.6' ? 3 : 1;
    out.push([`Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/${v} Safari/605.1.15`, 4 * w]);
  }
  for (const v of ios) {
    const w = v >= '18' ? 3 : 1;
    const ver = v.split('_').slice(0, 2).join('.');
    out.push([`Mozilla/5.0 (iPhone; CPU iPhone OS ${v} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/${ver} Mobile/15E148 Safari/604.1`, 12 * w]);
    out.push([`Mozilla/5.0 (iPad; CPU OS ${v} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/${ver} Mobile/15E148 Safari/604.1`, 1.5 * w]);
    out.push([`Mozilla/5.0 (iPhone; CPU iPhone OS ${v} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/132.0 Mobile/15E148 Safari/605.1.15`, 0.3 * w]);
  }
  return out;
}

/** 300 paths, most visited first. */
export function paths(n = 300): string[] {
  const fixed = ['/', '/pricing', '/features', '/blog', '/docs', '/signup', '/login', '/about', '/contact', '/changelog', '/docs/getting-started',
    '/integrations', '/status', '/security', '/careers', '/customers', '/docs/api', '/blog/uptime-monitoring-guide', '/compare/pingdom', '/legal/privacy'];
  const out = [...fixed];
  const sections = ['blog', 'docs', 'integrations', 'customers', 'docs/api', 'help'];
  const words = ['heartbeat', 'cron', 'ssl', 'dns', 'status-page', 'incident', 'on-call', 'latency', 'webhook', 'slack', 'pagerduty', 'alerts',
    'ping', 'keyword', 'tcp', 'maintenance', 'escalation', 'teams', 'sms', 'grafana', 'prometheus', 'kubernetes', 'docker', 'uptime'];
  for (let i = 0; out.length < n; i++) {
    out.push(`/${sections[i % sections.length]}/${words[(i * 7) % words.length]}-${words[(i * 11 + 3) % words.length]}${i > words.length ? `-${i}` : ''}`);
  }
  return out.slice(0, n);
}

/** External referrers of a first page, with weights; null = none (typed in, bookmarks, apps). */
const REFERRERS: [string | null, number][] = [
  [null, 40], ['https://www.google.com/', 30], ['https://www.bing.com/', 3], ['https://duckduckgo.com/', 3], ['https://search.brave.com/', 0.5],
  ['https://www.ecosia.org/', 0.3], ['https://yandex.ru/', 0.4], ['https://www.google.de/', 1.5], ['https://www.google.co.uk/', 1.2], ['https://www.google.fr/', 0.8],
  ['https://news.ycombinator.com/', 3], ['https://www.reddit.com/r/selfhosted/', 2], ['https://www.reddit.com/r/devops/', 1], ['https://t.co/', 1.5],
  ['https://www.linkedin.com/', 1.2], ['https://www.facebook.com/', 0.8], ['https://github.com/vigil/vigil', 2.5], ['https://stackoverflow.com/questions/12345', 1],
  ['https://dev.to/', 0.6], ['https://medium.com/', 0.6], ['https://lobste.rs/', 0.4], ['https://www.producthunt.com/', 0.5], ['https://chatgpt.com/', 1],
  ['https://www.perplexity.ai/', 0.3], ['https://alternativeto.net/software/uptimerobot/', 0.5], ['https://www.youtube.com/', 0.4],
  ['https://mastodon.social/', 0.3], ['https://bsky.app/', 0.3], ['https://www.baidu.com/', 0.2], ['https://search.yahoo.com/', 0.3], ['https://awesome-selfhosted.net/', 0.4],
];

const UTM = [
  '?utm_source=newsletter&utm_medium=email&utm_campaign=december-2024', '?utm_source=newsletter&utm_medium=email&utm_campaign=launch-week',
  '?utm_source=twitter&utm_medium=social&utm_campaign=launch-week', '?utm_source=google&utm_medium=cpc&utm_campaign=brand',
  '?utm_source=google&utm_medium=cpc&utm_campaign=uptime-monitoring', '?utm_source=linkedin&utm_medium=social&utm_campaign=hiring',
  '?utm_source=producthunt&utm_medium=referral', '?utm_source=github&utm_medium=readme', '?ref=producthunt', '?utm_source=partner-blog&utm_medium=referral&utm_campaign=q4',
];
const OTHER_QUERY = ['?page=2', '?page=3', '?q=heartbeat', '?tab=yearly', '?lang=de', '#install', '#pricing-faq'];

interface Custom { n: string; p?: () => Record<string, string>; i?: false }

/** Visitors, user agents, pages and events of the benchmark, and a request body per call. */
export class Traffic {
  readonly uas: string[];
  readonly paths: string[];
  private readonly r: () => number;
  private readonly ip: string[];
  private readonly ua: string[];
  private readonly entryRef: (string | null)[];
  private readonly last: (string | null)[];
  private readonly custom: () => Custom;
  private readonly origin: string;

  constructor(readonly domain: string, readonly visitors: number, seed = 12) {
    this.r = rng(seed);
    this.origin = `https://${domain}`;
    const agents = userAgents();
    this.uas = agents.map(([u]) => u);
    for (const u of this.uas) if (parseAgent(u).bot) throw new Error(`user agent taken for a bot: ${u}`);
    this.paths = paths();
    const ua = weighted(agents, this.r);
    const ref = weighted(REFERRERS, this.r);
    this.ip = Array.from({ length: visitors }, (_, i) => this.address(i));
    this.ua = Array.from({ length: visitors }, () => ua());
    this.entryRef = Array.from({ length: visitors }, () => ref());
    this.last = new Array(visitors).fill(null);
    const pick = <T>(a: T[]) => a[Math.floor(this.r() * a.length)];
    const hosts = ['github.com/vigil/vigil', 'docs.docker.com', 'kubernetes.io', 'grafana.com', 'discord.gg/vigil', 'twitter.com/vigil'];
    this.custom = weighted<Custom>([
      [{ n: 'Signup', p: () => ({ plan: pick(['free', 'free', 'free', 'pro', 'business']), method: pick(['email', 'github', 'google']) }) }, 2],
      [{ n: 'Outbound Link: Click', p: () => ({ url: `https://${pick(hosts)}` }) }, 3],
      [{ n: 'File Download', p: () => ({ url: `${this.origin}/downloads/vigil-${pick(['linux-amd64', 'linux-arm64', 'darwin-arm64', 'windows-amd64'])}.tar.gz` }) }, 1],
      [{ n: 'Form: Submission', p: () => ({ form: pick(['contact', 'newsletter', 'demo']) }) }, 1],
      [{ n: 'Purchase', p: () => ({ plan: pick(['pro', 'business']), cadence: pick(['monthly', 'yearly']) }) }, 0.4],
      [{ n: 'Video Play', p: () => ({ video: pick(['intro', 'status-pages', 'on-call']) }), i: false }, 0.6],
    ], this.r);
  }

  /** A public address for visitor `i`: IPv4 mostly, one in ten IPv6. */
  private address(i: number): string {
    if (i % 10 === 9) {
      const prefix = ['2a02', '2a01', '2600', '2601', '2406', '2804', '2a00', '2409'][i % 8];
      const h = () => Math.floor(this.r() * 0x10000).toString(16);
      return `${prefix}:${h()}:${h()}:${h()}::${h()}`;
    }
    for (;;) {
      const a = 1 + Math.floor(this.r() * 223);
      const b = Math.floor(this.r() * 256);
      if (a === 10 || a === 127 || a === 0 || (a === 100 && b >= 64 && b < 128) || (a === 169 && b === 254) || (a === 172 && b >= 16 && b < 32) || (a === 192 && b === 168)) continue;
      return `${a}.${b}.${Math.floor(this.r() * 256)}.${1 + Math.floor(this.r() * 254)}`;
    }
  }

  /** The next request: its body (the tracker's JSON), user agent, client address and whether it is a pageview. */
  next(): { body: string; ua: string; ip: string; page: string; pageview: boolean } {
    const u = this.r();
    // Skewed: visitor k with density ∝ 1/sqrt(k) — a few come back often, most rarely.
    const v = Math.min(this.visitors - 1, Math.floor(this.visitors * u * u));
    const path = this.paths[zipf(this.paths.length, this.r())];
    const q = this.r();
    const query = q < 0.08 ? UTM[Math.floor(this.r() * UTM.length)] : q < 0.11 ? OTHER_QUERY[Math.floor(this.r() * OTHER_QUERY.length)] : '';
    const page = `${this.origin}${path}${query}`;
    const custom = this.r() < 0.08 ? this.custom() : null;
    const body: Record<string, unknown> = { n: custom ? custom.n : 'pageview', v: 36, u: custom ? (this.last[v] ?? page) : page, d: this.domain };
    body.r = this.last[v] ?? this.entryRef[v];
    if (custom?.p) body.p = custom.p();
    if (custom?.i === false) body.i = false;
    if (!custom) this.last[v] = page;
    return { body: JSON.stringify(body), ua: this.ua[v], ip: this.ip[v], page, pageview: !custom };
  }
}
