/**
 * What Vigil keeps of a user agent: whether it is a bot (`isbot`), and the
 * browser, OS and device class (`ua-parser-js` 1.x, MIT; 2.x is AGPL). The
 * string itself is never stored. Parsing costs ~100 µs, so answers are kept
 * in a small LRU keyed by the string (real traffic repeats a few thousand
 * user agents).
 */
import { isbot } from 'isbot';
import { UAParser } from 'ua-parser-js';

/** A parsed user agent. */
export interface Agent {
  bot: boolean;
  browser: string | null;
  os: string | null;
  /** `desktop`, `mobile` or `tablet`. */
  device: 'desktop' | 'mobile' | 'tablet';
}

/** User agents remembered (each answer is a few dozen bytes, plus its key). */
const MAX_ENTRIES = 10_000;
/** Longer strings are not remembered (they are not browsers', and could fill memory). */
const MAX_KEY = 1024;

const cache = new Map<string, Agent>();

/** Names as people know them: ua-parser's "Mobile Safari" is Safari, "Mac OS" is macOS. */
function browserName(name: string | undefined): string | null {
  if (!name) return null;
  return name.replace(/^Mobile /, '').replace(/ (Mobile|WebView)$/, '');
}

function osName(name: string | undefined): string | null {
  if (!name) return null;
  return name === 'Mac OS' ? 'macOS' : name;
}

function parse(ua: string): Agent {
  if (ua.trim() === '' || isbot(ua)) return { bot: true, browser: null, os: null, device: 'desktop' };
  const r = new UAParser(ua).getResult();
  // ua-parser says nothing for desktops; consoles, TVs and embedded browsers count as desktop too.
  const type = r.device.type;
  const device = type === 'tablet' ? 'tablet' : type === 'mobile' || type === 'wearable' ? 'mobile' : 'desktop';
  return { bot: false, browser: browserName(r.browser.name), os: osName(r.os.name), device };
}

/** The agent of a User-Agent header; a missing or blank one counts as a bot (every browser sends one). */
export function parseAgent(ua: string | undefined): Agent {
  if (ua === undefined) return { bot: true, browser: null, os: null, device: 'desktop' };
  const hit = cache.get(ua);
  if (hit) {
    // Most recently used last: Map keeps insertion order.
    cache.delete(ua);
    cache.set(ua, hit);
    return hit;
  }
  const agent = parse(ua);
  if (ua.length <= MAX_KEY) {
    if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value!);
    cache.set(ua, agent);
  }
  return agent;
}
