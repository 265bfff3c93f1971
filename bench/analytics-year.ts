/**
 * A year of one site's traffic for the analytics report benchmark
 * (bench/analytics.ts, part b), made in SQL:
 *
 * - `fillEvents` writes a range of days of events, set-wise
 *   (generate_series), into `analytics_buffer` (for the real drain) or into a
 *   scratch table of the same columns. Per day a share of the total with a
 *   weekly rhythm (weekends ~65%), a growth over the year (×1.8), a December
 *   dip and ±10% noise; within the day, visits at a daily rhythm (a peak
 *   around 14:00 UTC over a floor). A visit is 1 event (half of them: most
 *   bounce) or 2 + ⌊Exp(1.6)⌋, 10–180 s apart, mean ≈ 2.1 events; its visitor
 *   is one of ~0.8 × the day's visits, hashed per day (the same index on two
 *   days is two visitors), with the browser, OS, device and country of that
 *   index; its entry values (referrer: 50 hosts by Zipf, 40% none; UTM on
 *   ~10% of visits, 12 source/medium/campaign sets) hold for its events.
 *   Pages: 2,000 paths by Zipf (rank r ∝ 1/r). 6% of the events after a
 *   visit's first are custom events (Signup, Outbound Link: Click with 40
 *   URLs, File Download, Form: Submission, Purchase, Video Play with `i:
 *   false`), with props. Timestamps are whole milliseconds, rows go in time
 *   order (the drain takes the buffer in `seq` order).
 *
 * - `rollupSql` is what the drain (src/analytics/drain.ts with count.ts)
 *   writes into `analytics_hourly` and `analytics_daily` for a set of events,
 *   said in SQL (docs/analytics.md, "Roll-up rows"): sessions are a
 *   visitor's events with no gap over 30 minutes; each event counts as a
 *   pageview (or event) under the totals and its session's entry values
 *   (referrer, country, browser, os, device, utm_*), under its own path, its
 *   name (custom events) and its props; each session counts a visit, a
 *   bounce (one pageview, no interactive custom event) and its duration (0 for
 *   a bounce) at its start hour under its entry values and entry path; a
 *   visitor counts once per day under each (dimension, value), in the hour
 *   it first met it. The daily rows are the hourly ones summed per UTC day.
 *   It writes no raw events and no sessions (reports never read them).
 *   The benchmark checks it against the drain on the drained days.
 */
import type pg from 'pg';
import { PROP_SEPARATOR } from '../src/analytics/count';
import { paths as topPaths } from './analytics-events';

const DAY = 86_400_000;

/** `YYYY-MM-DD` of a UTC day. */
export const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Events per day: `total` over the `days` UTC days ending with the day of `end` (today), summing exactly to `total`. */
export function dayPlan(total: number, days: number, end: Date): { day: string; events: number }[] {
  const last = Date.UTC(end.getUTCFullYear(), end.getUTCMonth(), end.getUTCDate());
  const w: number[] = [];
  for (let i = 0; i < days; i++) {
    const d = new Date(last - (days - 1 - i) * DAY);
    const dow = d.getUTCDay();
    const weekly = dow === 6 ? 0.62 : dow === 0 ? 0.68 : dow === 5 ? 0.92 : 1;
    const growth = 0.7 + (0.56 * i) / Math.max(1, days - 1);
    const m = d.getUTCMonth();
    const dd = d.getUTCDate();
    const season = m === 11 && dd >= 22 ? 0.55 : m === 7 ? 0.85 : m === 0 && dd <= 2 ? 0.6 : 1;
    const noise = 0.9 + 0.2 * (Math.abs(Math.sin(i * 12.9898) * 43758.5453) % 1);
    w.push(weekly * growth * season * noise);
  }
  const sum = w.reduce((a, b) => a + b, 0);
  const out = w.map((x, i) => ({ day: isoDay(last - (days - 1 - i) * DAY), events: Math.floor((total * x) / sum) }));
  let rest = total - out.reduce((a, d) => a + d.events, 0);
  for (let i = out.length - 1; rest > 0; i = (i - 1 + out.length) % out.length, rest--) out[i].events++;
  return out;
}

/** The lists the generator draws from, sent once as array parameters. */
function lists(domain: string) {
  const referrers = [
    'google.com', 'bing.com', 'duckduckgo.com', 'news.ycombinator.com', 'reddit.com', 'github.com', 't.co', 'linkedin.com', 'google.de',
    'google.co.uk', 'facebook.com', 'stackoverflow.com', 'chatgpt.com', 'dev.to', 'medium.com', 'google.fr', 'yandex.ru', 'search.brave.com',
    'lobste.rs', 'producthunt.com', 'alternativeto.net', 'youtube.com', 'ecosia.org', 'perplexity.ai', 'google.ca', 'google.com.au', 'baidu.com',
    'search.yahoo.com', 'mastodon.social', 'bsky.app', 'awesome-selfhosted.net', 'hn.algolia.com', 'slashdot.org', 'google.nl', 'google.es',
    'google.it', 'google.co.in', 'google.com.br', 'qwant.com', 'startpage.com', 'kagi.com', 'instagram.com', 'discord.com', 'slack.com',
    'teams.microsoft.com', 'notion.so', 'substack.com', 'hackernoon.com', 'infoq.com', 'thenewstack.io',
  ];
  const countries = [
    'US', 'DE', 'GB', 'IN', 'FR', 'CA', 'NL', 'BR', 'AU', 'ES', 'IT', 'PL', 'SE', 'JP', 'CH', 'RU', 'CN', 'UA', 'TR', 'BE', 'AT', 'DK', 'NO', 'FI',
    'CZ', 'PT', 'IE', 'MX', 'AR', 'SG', 'KR', 'ID', 'VN', 'PH', 'TH', 'MY', 'ZA', 'NG', 'EG', 'KE', 'IL', 'AE', 'SA', 'PK', 'BD', 'LK', 'NZ', 'CO',
    'CL', 'PE', 'RO', 'HU', 'GR', 'BG', 'RS', 'HR', 'SK', 'SI', 'LT', 'LV', 'EE', 'BY', 'KZ', 'GE', 'AM', 'AZ', 'IR', 'IQ', 'JO', 'LB', 'MA', 'TN',
    'DZ', 'GH', 'ET', 'TZ', 'UG', 'CM', 'SN', 'CI', 'TW', 'HK', 'MO', 'NP', 'MM', 'KH', 'LA', 'MN', 'UZ', 'KG', 'EC', 'VE', 'BO', 'PY', 'UY', 'CR',
    'PA', 'DO', 'GT', 'CU',
  ];
  // Browser, OS and device per 100 visitors.
  const combos: [string, string, string, number][] = [
    ['Chrome', 'Windows', 'desktop', 26], ['Chrome', 'macOS', 'desktop', 9], ['Chrome', 'Linux', 'desktop', 3], ['Chrome', 'Chrome OS', 'desktop', 1],
    ['Edge', 'Windows', 'desktop', 6], ['Firefox', 'Windows', 'desktop', 4], ['Firefox', 'Linux', 'desktop', 2], ['Firefox', 'macOS', 'desktop', 1],
    ['Safari', 'macOS', 'desktop', 7], ['Opera', 'Windows', 'desktop', 1], ['Safari', 'iOS', 'mobile', 16], ['Chrome', 'Android', 'mobile', 14],
    ['Samsung Internet', 'Android', 'mobile', 3], ['Chrome', 'iOS', 'mobile', 2], ['Firefox', 'Android', 'mobile', 1], ['Safari', 'iOS', 'tablet', 3],
    ['Chrome', 'Android', 'tablet', 1],
  ];
  const expand = (k: 0 | 1 | 2) => combos.flatMap((c) => Array(c[3]).fill(c[k]) as string[]);
  const utm: [string, string, string | null][] = [
    ['newsletter', 'email', 'december'], ['newsletter', 'email', 'launch-week'], ['newsletter', 'email', 'spring-update'], ['twitter', 'social', 'launch-week'],
    ['google', 'cpc', 'brand'], ['google', 'cpc', 'uptime-monitoring'], ['google', 'cpc', 'status-pages'], ['linkedin', 'social', 'hiring'],
    ['producthunt', 'referral', null], ['github', 'readme', null], ['partner-blog', 'referral', 'q4'], ['bing', 'cpc', 'brand'],
  ];
  const outbound = Array.from({ length: 40 }, (_, i) => `https://${['github.com/vigil', 'docs.docker.com', 'kubernetes.io/docs', 'grafana.com/docs', 'discord.gg'][i % 5]}/${i}`);
  return {
    domain, referrers, countries, paths: topPaths(2000),
    browsers: expand(0), oses: expand(1), devices: expand(2),
    utmSource: utm.map((u) => u[0]), utmMedium: utm.map((u) => u[1]), utmCampaign: utm.map((u) => u[2]), outbound,
  };
}

/** Columns of `analytics_buffer` the generator fills (all but `seq`). */
const COLUMNS = 'site_id, at, name, pathname, hostname, referrer, referrer_source, country, browser, os, device, utm_source, utm_medium, utm_campaign, props, visitor, interactive';

/**
 * Inserts the events of `plan`'s days, in time order, into `table`
 * (analytics_buffer, or a table with its columns). Returns the rows written.
 */
export async function fillEvents(c: pg.Client, table: string, siteId: string, domain: string, plan: { day: string; events: number }[], ordered = true): Promise<number> {
  const l = lists(domain);
  // $1 site, $2 domain, $3 days, $4 events per day, $5.. lists. Zipf over n: least(n, floor(exp(random() * ln(n + 1)))), 1-based.
  const zipf = (n: string) => `least(${n}, floor(exp(random() * ln(${n} + 1)))::int)`;
  const text = `
    insert into ${table} (${COLUMNS})
    with plan as (
      select d.day, d.n, ceil(d.n / 2.1 * 1.3)::int as visits, greatest(1, round(d.n / 2.1 * 0.8))::int as pool
      from unnest($3::date[], $4::int[]) d(day, n)
    ), v as materialized (
      select p.day, p.n, g as i, floor(random() * p.pool)::int as vidx,
        -- the daily rhythm: a quarter of the visits uniform over the day, the rest around 14:00 UTC (σ 3.8 h), wrapped
        case when random() < 0.25 then random() else 0.585 + 0.16 * sqrt(-2 * ln(1 - random())) * cos(2 * pi() * random()) end as tod,
        case when random() < 0.5 then 1 else 2 + floor(-ln(1 - random()) * 1.6)::int end as k,
        10 + floor(random() * 171)::int as gap,
        case when random() < 0.4 then null else ${zipf('50')} end as ref,
        case when random() < 0.9 then null else 1 + floor(random() * 12)::int end as utm
      from plan p, generate_series(1, p.visits) g
    ), vv as (
      select v.*, sum(k) over (partition by day order by i) - k as before,
        (v.day::timestamp at time zone 'UTC') + make_interval(secs => floor(86400000 * (v.tod - floor(v.tod))) / 1000.0) as start,
        hashtextextended(v.day::text || ':' || v.vidx, 7) as visitor,
        1 + abs(hashtext('c' || v.vidx)) % 100 as combo,
        -- the country of the visitor index: Zipf over 100, 1% unknown
        case when abs(hashtext('u' || v.vidx)) % 100 = 0 then null
          else least(100, floor(exp((abs(hashtext('g' || v.vidx)) % 1000000) / 1e6 * ln(101)))::int) end as country
      from v
    ), e as (
      select vv.*, j,
        least(vv.start + make_interval(secs => (j - 1) * vv.gap), (vv.day + 1)::timestamp at time zone 'UTC' - interval '1 millisecond') as at,
        case when j > 1 and random() < 0.06 then 1 + floor(random() * 100)::int else 0 end as custom,
        ${zipf('2000')} as page, random() as r1
      from vv, generate_series(1, vv.k) j
      where vv.before + j <= vv.n
    )
    select $1, e.at,
      case when e.custom = 0 then 'pageview' when e.custom <= 30 then 'Outbound Link: Click' when e.custom <= 55 then 'Signup'
        when e.custom <= 70 then 'File Download' when e.custom <= 85 then 'Form: Submission' when e.custom <= 92 then 'Purchase' else 'Video Play' end,
      ($5::text[])[e.page], $2,
      case when e.ref is null then null else ($6::text[])[e.ref] end, case when e.ref is null then null else ($6::text[])[e.ref] end,
      ($7::text[])[e.country], ($8::text[])[e.combo], ($9::text[])[e.combo], ($10::text[])[e.combo],
      ($11::text[])[e.utm], ($12::text[])[e.utm], ($13::text[])[e.utm],
      case when e.custom = 0 then null
        when e.custom <= 30 then jsonb_build_object('url', ($14::text[])[1 + floor(e.r1 * 40)::int])
        when e.custom <= 55 then jsonb_build_object('plan', (array['free', 'free', 'free', 'pro', 'business'])[1 + floor(e.r1 * 5)::int],
          'method', (array['email', 'github', 'google'])[1 + floor(e.r1 * 15)::int % 3])
        when e.custom <= 70 then jsonb_build_object('url', 'https://' || $2 || '/downloads/vigil-' || (array['linux-amd64', 'linux-arm64', 'darwin-arm64', 'windows-amd64'])[1 + floor(e.r1 * 4)::int] || '.tar.gz')
        when e.custom <= 85 then jsonb_build_object('form', (array['contact', 'newsletter', 'demo'])[1 + floor(e.r1 * 3)::int])
        when e.custom <= 92 then jsonb_build_object('plan', (array['pro', 'business'])[1 + floor(e.r1 * 2)::int], 'cadence', (array['monthly', 'yearly'])[1 + floor(e.r1 * 20)::int % 2])
        else jsonb_build_object('video', (array['intro', 'status-pages', 'on-call'])[1 + floor(e.r1 * 3)::int]) end,
      e.visitor, e.custom <= 92
    from e ${ordered ? 'order by e.at, e.visitor, e.j' : ''}`;
  const r = await c.query(text, [siteId, domain, plan.map((p) => p.day), plan.map((p) => p.events), l.paths, l.referrers, l.countries,
    l.browsers, l.oses, l.devices, l.utmSource, l.utmMedium, l.utmCampaign, l.outbound]);
  return r.rowCount ?? 0;
}

/** The session dimensions, as `analytics_sessions.entry` and count.ts name them. */
const SESSION_DIMS = ['referrer', 'country', 'browser', 'os', 'device', 'utm_source', 'utm_medium', 'utm_campaign'];
const SEP = `chr(${PROP_SEPARATOR.charCodeAt(0)})`;

/**
 * `dimension, value, <metric>` of a `group by grouping sets` over the
 * totals and each of `dims` (column `<alias>.<dim>`; `path` is column
 * `entry_path`): which set a row is of, its value, and `metric(set)`.
 */
function perSet(alias: string, dims: string[], metric: (d: string) => string): string {
  const col = (d: string) => `${alias}.${d === 'path' ? 'entry_path' : d}`;
  const pick = (f: (d: string) => string, otherwise: string) => `case ${dims.map((d) => `when grouping(${col(d)}) = 0 then ${f(d)}`).join(' ')} else ${otherwise} end`;
  return `${pick((d) => `'${d}'`, `''`)} as dimension, ${pick(col, `''`)} as value, ${pick(metric, metric(''))}`;
}
const sets = (alias: string, hour: string, dims: string[]) =>
  `grouping sets ((${hour}), ${dims.map((d) => `(${hour}, ${alias}.${d === 'path' ? 'entry_path' : d})`).join(', ')})`;

/**
 * The roll-ups of the events of `source` (a query with the buffer's columns
 * and an `ord` tie-breaker) for site `$1`, in SQL: the statements to run in
 * order on one connection (`set time zone 'UTC'` first). They add into
 * `analytics_hourly` and `analytics_daily`, or into `into` tables of the same
 * columns (for the check against the drain).
 */
export function rollupSql(source: string, into = 'analytics_daily'): string[] {
  const none = (c: string) => `coalesce(nullif(${c}, ''), '(none)')`;
  const sums = ['visitors', 'pageviews', 'events', 'visits', 'bounces', 'duration_s'];
  const firstOf = (d: string) => `f_${d || 'total'}`;
  return [
    'drop table if exists bx_e, bx_s',
    // Events with their hour, day, session number (a new session after a gap of over 30 minutes; `new` marks its entry
    // event) and whether the visitor meets its path there for the first time that day.
    `create temp table bx_e as
      select s.*, sum(s.new) over (partition by s.visitor, s.day order by s.at, s.ord) as sn,
        row_number() over (partition by s.visitor, s.day, s.pathname order by s.at, s.ord) = 1 as f_path
      from (
        select e.visitor, e.at, e.ord, e.name, e.pathname, e.props, e.interactive, date_trunc('hour', e.at) as hour, date_trunc('day', e.at) as day,
          ${SESSION_DIMS.map((d) => `${none(`e.${d === 'referrer' ? 'referrer_source' : d}`)} as ${d}`).join(', ')},
          case when e.at - lag(e.at) over w <= interval '30 minutes' then 0 else 1 end as new
        from (${source}) e
        window w as (partition by e.visitor, date_trunc('day', e.at) order by e.at, e.ord)
      ) s`,
    // Sessions: entry values (of the entry event), start hour, bounce and duration, and whether it is the visitor's
    // first that day with each entry value (always, for the many visitors with one session that day).
    `create temp table bx_s as
      with s as (
        select f.visitor, f.day, f.sn, f.at as started, f.hour as start_hour, f.pathname as entry_path,
          ${SESSION_DIMS.map((d) => `f.${d}`).join(', ')},
          a.pv, a.ev, case when a.pv = 1 and a.ie = 0 then 1 else 0 end as bounce,
          case when a.pv = 1 and a.ie = 0 then 0 else floor(extract(epoch from a.last_at - f.at))::bigint end as dur,
          count(*) over (partition by f.visitor, f.day) as sessions
        from bx_e f
        join (select visitor, day, sn, max(at) as last_at, count(*) filter (where name = 'pageview') as pv,
                count(*) filter (where name <> 'pageview') as ev, count(*) filter (where name <> 'pageview' and interactive) as ie
              from bx_e group by visitor, day, sn) a using (visitor, day, sn)
        where f.new = 1
      )
      select s.*, true as f_total, ${SESSION_DIMS.map((d) => `true as f_${d}`).join(', ')} from s where sessions = 1
      union all
      select s.*, row_number() over (partition by visitor, day order by started, sn) = 1,
        ${SESSION_DIMS.map((d) => `row_number() over (partition by visitor, day, ${d} order by started, sn) = 1`).join(',\n        ')}
      from s where sessions > 1`,
    // The daily rows.
    `insert into ${into} as t (site_id, day, dimension, value, ${sums.join(', ')})
      select $1, day::date, dimension, value, sum(visitors), sum(pageviews), sum(events), sum(visits), sum(bounces), sum(duration_s)
      from (
        -- sessions: visits, bounces, duration under their pairs and entry page; visitors first met under each pair
        select s.day, ${perSet('s', [...SESSION_DIMS, 'path'], (d) => (d === 'path' ? '0' : `count(*) filter (where s.${firstOf(d)})`))} as visitors,
          case when grouping(s.entry_path) = 0 then 0 else sum(s.pv) end as pageviews,
          case when grouping(s.entry_path) = 0 then 0 else sum(s.ev) end as events, count(*) as visits, sum(s.bounce) as bounces, sum(s.dur) as duration_s
        from bx_s s group by ${sets('s', 's.day', [...SESSION_DIMS, 'path'])}
        union all
        -- events under their own pairs: path, name (custom events), props
        select day, 'path', pathname, count(*) filter (where f_path), count(*) filter (where name = 'pageview'), count(*) filter (where name <> 'pageview'), 0, 0, 0
        from bx_e group by day, pathname
        union all
        select day, 'event', name, count(*) filter (where first), 0, count(*), 0, 0, 0
        from (select day, name, row_number() over (partition by visitor, day, name order by at, ord) = 1 as first from bx_e where name <> 'pageview') c
        group by day, name
        union all
        select day, 'prop', value, count(*) filter (where first), count(*) filter (where name = 'pageview'), count(*) filter (where name <> 'pageview'), 0, 0, 0
        from (select e.day, e.name, e.name || ${SEP} || kv.key || ${SEP} || kv.value as value,
                row_number() over (partition by e.visitor, e.day, e.name || ${SEP} || kv.key || ${SEP} || kv.value order by e.at, e.ord) = 1 as first
              from bx_e e cross join lateral jsonb_each_text(e.props) kv where e.props is not null) p
        group by day, value
      ) r group by day, dimension, value
      on conflict (site_id, dimension, day, value) do update set ${sums.map((m) => `${m} = t.${m} + excluded.${m}`).join(', ')}`,
    'drop table bx_e, bx_s',
  ];
}
