import { dns } from '../src/engine/kinds/dns';
import type { CheckContext } from '../src/engine/kinds/kind';
import { parseConfig } from '../src/engine/kinds';
import { startDnsServer, type DnsServer } from './support/dns-server';

let server: DnsServer;

const ctx = (over: Partial<CheckContext> = {}): CheckContext => ({
  monitorId: 'm', intervalSeconds: 60, now: new Date(), signal: AbortSignal.timeout(20000),
  net: { allowPrivate: true, extraCa: [] }, ...over,
});

const check = (config: Record<string, unknown>, over?: Partial<CheckContext>) =>
  dns.check({ resolver: server.address, ...config }, ctx(over));

beforeAll(async () => {
  server = await startDnsServer({
    'example.test': {
      A: ['192.0.2.10', '192.0.2.11'],
      AAAA: ['2001:db8::10'],
      MX: [{ priority: 10, exchange: 'mail.example.test' }, { priority: 20, exchange: 'backup.example.test' }],
      TXT: ['v=spf1 -all', 'hello world'],
      NS: ['ns1.example.test'],
      CAA: [{ tag: 'issue', value: 'letsencrypt.org' }],
      SOA: { mname: 'ns1.example.test', rname: 'hostmaster.example.test', serial: 2024010101, refresh: 3600, retry: 600, expire: 86400, minimum: 60 },
    },
    'www.example.test': { CNAME: 'example.test' },
    '_sip._tcp.example.test': { SRV: [{ priority: 10, weight: 5, port: 5060, target: 'sip.example.test' }] },
    '10.2.0.192.in-addr.arpa': { PTR: ['host.example.test'] },
    'long.example.test': { TXT: ['x'.repeat(600)] },
    'huge.example.test': { TXT: ['y'.repeat(3000)] }, // over any UDP size: truncated, then TCP
    'broken.example.test': { SERVFAIL: true },
    'slow.example.test': { DROP: true },
  });
});
afterAll(() => server.close());

describe('dns check', () => {
  test('A record resolves: up, answers in the message, resolution time measured', async () => {
    const r = await check({ name: 'example.test' });
    expect(r).toMatchObject({ outcome: 'up', cause: null });
    expect(r!.message).toContain('192.0.2.10, 192.0.2.11');
    expect(typeof r!.responseTimeMs).toBe('number');
  });

  test('expected values compare ignoring case and a trailing dot', async () => {
    expect((await check({ name: 'EXAMPLE.test.', recordType: 'MX', expected: ['Mail.Example.Test.', '20 backup.example.test'] }))!.outcome).toBe('up');
    expect((await check({ name: 'example.test', recordType: 'AAAA', expected: ['2001:DB8:0:0::10'] }))!.outcome).toBe('up');
    expect((await check({ name: 'example.test', recordType: 'TXT', expected: ['"v=spf1 -all"'] }))!.outcome).toBe('up');
  });

  test('an expected value missing from the answers: down with assertion_failed naming it', async () => {
    const r = await check({ name: 'example.test', expected: ['192.0.2.10', '192.0.2.99'] });
    expect(r).toMatchObject({ outcome: 'down', cause: 'assertion_failed' });
    expect(r!.message).toContain('192.0.2.99');
    expect(r!.message).not.toMatch(/expected 192\.0\.2\.10/);
    expect(r!.message).toContain('192.0.2.11');
  });

  test('every record type renders', async () => {
    const cases: [string, string, string][] = [
      ['www.example.test', 'CNAME', 'example.test'],
      ['www.example.test', 'A', '192.0.2.10'], // followed through the CNAME
      ['example.test', 'NS', 'ns1.example.test'],
      ['_sip._tcp.example.test', 'SRV', 'sip.example.test'],
      ['example.test', 'CAA', 'letsencrypt.org'],
      ['example.test', 'SOA', 'ns1.example.test'],
      ['10.2.0.192.in-addr.arpa', 'PTR', 'host.example.test'],
      ['long.example.test', 'TXT', 'x'.repeat(600)],
      ['huge.example.test', 'TXT', 'y'.repeat(3000)],
    ];
    for (const [name, recordType, want] of cases) {
      const r = await check({ name, recordType, expected: [want] });
      expect([recordType, r!.outcome, r!.message]).toEqual([recordType, 'up', expect.any(String)]);
    }
    const srv = await check({ name: '_sip._tcp.example.test', recordType: 'SRV' });
    expect(srv!.message).toContain('10 5 5060 sip.example.test');
  });

  test('NXDOMAIN, no records of the type, SERVFAIL: down with dns_failure', async () => {
    const nx = await check({ name: 'nope.example.test' });
    expect(nx).toMatchObject({ outcome: 'down', cause: 'dns_failure', responseTimeMs: null });
    expect(nx!.message).toMatch(/NXDOMAIN/);
    const nodata = await check({ name: 'www.example.test', recordType: 'SRV' });
    expect(nodata).toMatchObject({ outcome: 'down', cause: 'dns_failure' });
    const servfail = await check({ name: 'broken.example.test' });
    expect(servfail).toMatchObject({ outcome: 'down', cause: 'dns_failure' });
    expect(servfail!.message).toMatch(/SERVFAIL/);
  });

  test('a resolver that never answers: down with dns_failure (timeout), cut short by the signal', async () => {
    const t0 = Date.now();
    const r = await check({ name: 'slow.example.test' }, { signal: AbortSignal.timeout(1500) });
    expect(r).toMatchObject({ outcome: 'down', cause: 'dns_failure' });
    expect(r!.message).toMatch(/timed out/);
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  test('the resolver may carry a port; a private resolver is refused when the policy forbids private addresses', async () => {
    expect(server.address).toMatch(/:\d+$/);
    const r = await check({ name: 'example.test' }, { net: { allowPrivate: false, extraCa: [] } });
    expect(r).toMatchObject({ outcome: 'down', cause: 'dns_failure' });
    expect(r!.message).toMatch(/private address/);
    const bad = await check({ name: 'example.test', resolver: 'not-an-ip' });
    expect(bad).toMatchObject({ outcome: 'down', cause: 'dns_failure' });
  });

  test('config: resolver accepts ip, ip:port, IPv6 and [IPv6]:port, refuses names', () => {
    for (const resolver of ['192.0.2.53', '192.0.2.53:5353', '2001:db8::53', '[2001:db8::53]:5353', null]) {
      expect(parseConfig('dns', JSON.stringify({ name: 'example.test', resolver }))).toMatchObject({ resolver });
    }
    expect(() => parseConfig('dns', JSON.stringify({ name: 'example.test', resolver: 'dns.example' }))).toThrow();
  });
});
