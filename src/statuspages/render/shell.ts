import { escapeHtml, htmlDocument, type HtmlDocument } from '../../pipeline/html';

/** The page's own styles; the theme accent and the owner's custom CSS come after them. */
const BASE_CSS = `
:root{--accent:#2563eb;--ok:#16a34a;--good:#65a30d;--minor:#ca8a04;--major:#ea580c;--critical:#dc2626;--maint:#2563eb;--none:#d1d5db;
--fg:#111827;--muted:#6b7280;--bg:#f3f4f6;--card:#fff;--line:#e5e7eb}
@media (prefers-color-scheme:dark){:root{--fg:#f3f4f6;--muted:#9ca3af;--bg:#111827;--card:#1f2937;--line:#374151;--none:#4b5563}}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:54rem;margin:0 auto;padding:2rem 1rem 3rem}
a{color:var(--accent)}
header{display:flex;align-items:center;gap:1rem;margin-bottom:1.5rem}
header img{max-height:3rem;max-width:12rem}
h1{font-size:1.6rem;margin:0;line-height:1.2}
h2{font-size:1.1rem;margin:0 0 .75rem}
h3{font-size:1rem;margin:1rem 0 .25rem;color:var(--muted)}
.headline{color:var(--muted);margin:.25rem 0 0}
.banner{border-radius:.5rem;padding:1rem 1.25rem;color:#fff;font-weight:600;font-size:1.15rem;margin-bottom:1.5rem}
.banner.operational{background:var(--ok)}.banner.degraded{background:var(--minor)}.banner.partial_outage{background:var(--major)}
.banner.major_outage{background:var(--critical)}.banner.maintenance{background:var(--maint)}
section{background:var(--card);border:1px solid var(--line);border-radius:.5rem;margin-bottom:1.5rem;padding:1rem 1.25rem}
.description p{margin:.25rem 0}
.component{padding:.75rem 0;border-top:1px solid var(--line)}
.component:first-child{border-top:0}
.row{display:flex;justify-content:space-between;align-items:baseline;gap:1rem}
.name{font-weight:600}
.state{font-size:.9rem;font-weight:600;white-space:nowrap}
.state.operational{color:var(--ok)}.state.degraded{color:var(--minor)}.state.partial_outage{color:var(--major)}
.state.major_outage{color:var(--critical)}.state.under_maintenance{color:var(--maint)}.state.pending,.state.paused{color:var(--muted)}
svg.bars{display:block;width:100%;height:2rem;margin:.5rem 0 .25rem}
svg.bars rect{fill:var(--none)}svg.bars rect.u0{fill:var(--ok)}svg.bars rect.u1{fill:var(--good)}svg.bars rect.u2{fill:var(--minor)}
svg.bars rect.u3{fill:var(--major)}svg.bars rect.u4{fill:var(--critical)}
svg.rt{display:block;width:100%;height:3rem;margin:.25rem 0}
svg.rt polyline{fill:none;stroke:var(--accent);stroke-width:2;vector-effect:non-scaling-stroke}
.legend{display:flex;justify-content:space-between;color:var(--muted);font-size:.8rem}
.incident{border-top:1px solid var(--line);padding:.75rem 0}
.incident:first-of-type{border-top:0}
.incident .title{font-weight:600}
.update{margin:.35rem 0 0 .75rem;padding-left:.75rem;border-left:3px solid var(--line)}
.update .kind{font-weight:600;margin-right:.5rem}
.muted,time{color:var(--muted);font-size:.875rem}
.notice{padding:.75rem 1rem;border-radius:.375rem;background:var(--bg);margin:.5rem 0}
.error{color:var(--critical)}
form{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
input{flex:1 1 14rem;padding:.5rem .6rem;border:1px solid var(--line);border-radius:.375rem;font:inherit;background:var(--card);color:var(--fg)}
button{padding:.5rem 1rem;border:0;border-radius:.375rem;background:var(--accent);color:#fff;font:inherit;font-weight:600;cursor:pointer}
label{font-size:.9rem}
footer{color:var(--muted);font-size:.875rem;display:flex;flex-wrap:wrap;gap:.5rem 1.25rem;justify-content:space-between;margin-top:1rem}
footer nav a{margin-right:.75rem}
`;

/** What a rendered HTML document needs besides its body. */
export interface ShellOptions {
  language: string;
  title: string;
  accent: string;
  customCss?: string | null;
  /** http(s) origin of the page's logo: the only other origin images may come from. */
  logoOrigin?: string | null;
  /** Keep search engines out (password and message pages). */
  noindex?: boolean;
  /** Alternate links for feeds. */
  feeds?: { rss: string; atom: string } | null;
  /** The overall state, shown as the tab's icon (without one, browsers ask the server root for /favicon.ico). */
  state?: string;
}

/** Tab icon colours by overall state (the same as the banner's). */
const ICON_COLOURS: Record<string, string> = {
  operational: '#16a34a', degraded: '#ca8a04', partial_outage: '#ea580c', major_outage: '#dc2626', maintenance: '#2563eb',
};

/** A round dot in the state's colour, as a `data:` URL the CSP's img-src allows. */
function icon(state: string | undefined): string {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="${ICON_COLOURS[state ?? ''] ?? '#9ca3af'}"/></svg>`;
  return `<link rel="icon" href="data:image/svg+xml,${encodeURIComponent(svg)}">`;
}

/** A rendered document and the Content-Security-Policy that goes with it. */
export type Rendered = HtmlDocument;

/** Wraps `body` in a complete document (src/pipeline/html.ts): the page's styles, its accent and custom CSS, its icon and feeds. */
export function shell(body: string, o: ShellOptions): Rendered {
  const css = `${BASE_CSS}:root{--accent:${o.accent}}\n${o.customCss ?? ''}`;
  const feeds = o.feeds
    ? `<link rel="alternate" type="application/rss+xml" href="${escapeHtml(o.feeds.rss)}"><link rel="alternate" type="application/atom+xml" href="${escapeHtml(o.feeds.atom)}">`
    : '';
  return htmlDocument({ lang: o.language, title: o.title, css, body, head: `${icon(o.state)}${feeds}`, noindex: o.noindex, imgOrigins: o.logoOrigin ? [o.logoOrigin] : [] });
}
