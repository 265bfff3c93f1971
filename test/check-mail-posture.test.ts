import crypto from 'node:crypto';
import https from 'node:https';
import type net from 'node:net';
import { mail_posture } from '../src/engine/kinds/mail_posture';
import type { CheckContext, CheckResult } from '../src/engine/kinds/kind';
import { parseConfig } from '../src/engine/kinds';
import { startDnsServer, type DnsServer, type Zone } from './support/dns-server';
import { chainPem, makePki, type CertKey } from './support/certs';

const dkimKey = (bits: number) => crypto.generateKeyPairSync('rsa', { modulusLength: bits }).publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
const KEY_2048 = dkimKey(2048);

/** A domain with everything in order: two MX (one with IPv6), SPF -all via an include, DMARC reject with rua, DKIM s1, MTA-STS enforce, TLS-RPT. */
function clean(d: string): Zone {
  return {
    [d]: { MX: [{ priority: 10, exchange: `mx1.${d}` }, { priority: 20, exchange: `mx2.${d}` }], TXT: ['v=spf1 mx include:_spf.provider.test -all', 'site-verification=abc'] },
    [`mx1.${d}`]: { A: ['192.0.2.25'], AAAA: ['2001:db8::25'] },
    [`mx2.${d}`]: { A: ['192.0.2.26'] },
    [`_dmarc.${d}`]: { TXT: ['v=DMARC1; p=reject; rua=mailto:dmarc@example.test'] },
    [`s1._domainkey.${d}`]: { TXT: [`v=DKIM1; k=rsa; p=${KEY_2048}`] },
    [`_mta-sts.${d}`]: { TXT: ['v=STSv1; id=20240101T000000'] },
    [`mta-sts.${d}`]: { A: ['127.0.0.1'] },
    [`_smtp._tls.${d}`]: { TXT: ['v=TLSRPTv1; rua=mailto:tls@example.test'] },
  };
}

const policyFor = (d: string, mode = 'enforce', mx = [`mx1.${d}`, `*.${d}`]) =>
  `version: STSv1\r\nmode: ${mode}\r\n${mx.map((m) => `mx: ${m}\r\n`).join('')}max_age: 604800\r\n`;

/** Domains under test, each with one thing changed from `clean`. */
const DOMAINS = [
  'good.test', 'nomx.test', 'nullmx.test', 'deadmx.test', 'halfdead.test', 'nov6.test',
  'nospf.test', 'twospf.test', 'plusall.test', 'neutral.test', 'noall.test', 'lookups.test', 'loop.test', 'badinclude.test', 'badterm.test', 'redirect.test',
  'nodmarc.test', 'twodmarc.test', 'baddmarc.test', 'pnone.test', 'norua.test', 'sub.good.test',
  'dkim.test', 'nosts.test', 'stsnoid.test', 'sts404.test', 'stsbad.test', 'stsmismatch.test', 'ststesting.test', 'stsnohost.test',
  'notlsrpt.test', 'badtlsrpt.test', 'servfail.test', 'dmarcfail.test',
];

function buildZone(): Zone {
  const zone: Zone = { '_spf.provider.test': { TXT: ['v=spf1 ip4:198.51.100.0/24 ~all'] } };
  for (const d of DOMAINS) Object.assign(zone, clean(d));
  const set = (name: string, entry: Zone[string]) => { zone[name] = entry; };
  const txt = (name: string, ...records: string[]) => { zone[name] = { ...zone[name], TXT: records }; };
  // MX
  set('nomx.test', { TXT: zone['nomx.test'].TXT });
  set('nullmx.test', { MX: [{ priority: 0, exchange: '.' }], TXT: ['v=spf1 -all'] });
  delete zone['mx1.deadmx.test']; delete zone['mx2.deadmx.test'];
  delete zone['mx2.halfdead.test'];
  set('mx1.nov6.test', { A: ['192.0.2.25'] });
  // SPF
  txt('nospf.test', 'site-verification=abc');
  txt('twospf.test', 'v=spf1 -all', 'v=spf1 mx -all');
  txt('plusall.test', 'v=spf1 +all');
  txt('neutral.test', 'v=spf1 mx ?all');
  txt('noall.test', 'v=spf1 mx');
  txt('lookups.test', 'v=spf1 a mx include:_spf.provider.test include:inc1.lookups.test a:x1.test a:x2.test a:x3.test exists:x4.test -all');
  set('inc1.lookups.test', { TXT: ['v=spf1 a:y1.test a:y2.test mx:y3.test ~all'] });
  txt('loop.test', 'v=spf1 include:a.loop.test -all');
  set('a.loop.test', { TXT: ['v=spf1 include:b.loop.test -all'] });
  set('b.loop.test', { TXT: ['v=spf1 include:a.loop.test -all'] });
  txt('badinclude.test', 'v=spf1 include:nothing.badinclude.test -all');
  txt('badterm.test', 'v=spf1 mx foo:bar -all');
  txt('redirect.test', 'v=spf1 redirect=_spf.provider.test');
  // DMARC
  delete zone['_dmarc.nodmarc.test'];
  txt('_dmarc.twodmarc.test', 'v=DMARC1; p=reject', 'v=DMARC1; p=none');
  txt('_dmarc.baddmarc.test', 'v=DMARC1; p=maybe');
  txt('_dmarc.pnone.test', 'v=DMARC1; p=none; rua=mailto:d@example.test');
  txt('_dmarc.norua.test', 'v=DMARC1; p=quarantine');
  delete zone['_dmarc.sub.good.test'];
  txt('_dmarc.good.test', 'v=DMARC1; p=reject; sp=quarantine; rua=mailto:dmarc@example.test');
  // DKIM selectors of dkim.test: s1 fine, weak, tiny, revoked, broken, ed (Ed25519); "absent" has none
  txt('weak._domainkey.dkim.test', `v=DKIM1; k=rsa; p=${dkimKey(1024)}`);
  txt('tiny._domainkey.dkim.test', `v=DKIM1; p=${dkimKey(512)}`);
  txt('revoked._domainkey.dkim.test', 'v=DKIM1; p=');
  txt('broken._domainkey.dkim.test', 'v=DKIM1; k=rsa; p=bm90IGEga2V5');
  txt('ed._domainkey.dkim.test', `v=DKIM1; k=ed25519; p=${Buffer.alloc(32, 7).toString('base64')}`);
  // MTA-STS (policies are served by the HTTPS server below)
  delete zone['_mta-sts.nosts.test'];
  txt('_mta-sts.stsnoid.test', 'v=STSv1;');
  delete zone['mta-sts.stsnohost.test'];
  // TLS-RPT
  delete zone['_smtp._tls.notlsrpt.test'];
  txt('_smtp._tls.badtlsrpt.test', 'v=TLSRPTv1; rua=ftp://example.test');
  // DNS failures
  set('servfail.test', { SERVFAIL: true });
  set('_dmarc.dmarcfail.test', { SERVFAIL: true });
  return zone;
}

const policies: Record<string, { status: number; body: string }> = {};
for (const d of DOMAINS) policies[`mta-sts.${d}`] = { status: 200, body: policyFor(d) };
policies['mta-sts.sts404.test'] = { status: 404, body: 'not here' };
policies['mta-sts.stsbad.test'] = { status: 200, body: 'version: STSv1\nmode: sometimes\nmx: *.stsbad.test\nmax_age: 86400\n' };
policies['mta-sts.stsmismatch.test'] = { status: 200, body: policyFor('stsmismatch.test', 'enforce', ['mx1.stsmismatch.test']) };
policies['mta-sts.ststesting.test'] = { status: 200, body: policyFor('ststesting.test', 'testing', ['mx1.ststesting.test']) };

let dns: DnsServer;
let ca: CertKey;
let stsPort: number;
let stsServer: https.Server;

beforeAll(async () => {
  dns = await startDnsServer(buildZone());
  const pki = makePki();
  ca = pki.ca;
  const leaf = pki.leaf({ names: DOMAINS.map((d) => `mta-sts.${d}`) });
  stsServer = https.createServer({ key: leaf.key, cert: chainPem(leaf, pki.intermediate) }, (req, res) => {
    const p = policies[(req.headers.host ?? '').toLowerCase()];
    const ok = p && req.url === '/.well-known/mta-sts.txt';
    res.writeHead(ok ? p.status : 404, { 'content-type': 'text/plain' });
    res.end(ok ? p.body : 'no');
  });
  await new Promise<void>((resolve) => stsServer.listen(0, '127.0.0.1', () => resolve()));
  stsPort = (stsServer.address() as net.AddressInfo).port;
});
afterAll(async () => {
  stsServer.close();
  await dns.close();
});

const ctx = (over: Partial<CheckContext> = {}): CheckContext => ({
  monitorId: 'm', intervalSeconds: 60, now: new Date(), signal: AbortSignal.timeout(20000),
  net: { allowPrivate: true, extraCa: [ca.cert] }, ...over,
});

async function posture(domain: string, config: Record<string, unknown> = {}, over?: Partial<CheckContext>): Promise<CheckResult> {
  return (await mail_posture.check({ domain, dkimSelectors: ['s1'], resolver: dns.address, mtaStsPort: stsPort, ...config }, ctx(over)))!;
}
const codes = (r: CheckResult) => r.detail!.findings.map((f) => f.code);
const find = (r: CheckResult, code: string) => r.detail!.findings.find((f) => f.code === code);

describe('mail_posture: a clean domain', () => {
  test('is up with only *_ok info findings', async () => {
    const r = await posture('good.test');
    expect(r).toMatchObject({ outcome: 'up', cause: null, detail: { grade: null, readings: [] } });
    expect(codes(r)).toEqual(['mx_ok', 'spf_ok', 'dmarc_ok', 'dkim_ok', 'mta_sts_ok', 'tlsrpt_ok']);
    expect(find(r, 'spf_ok')!.message).toMatch(/2 DNS lookups/);
    expect(find(r, 'dkim_ok')!.message).toMatch(/2048 bits/);
    expect(typeof r.responseTimeMs).toBe('number');
  });

  test('a subdomain without its own DMARC record inherits the parent (sp=)', async () => {
    const r = await posture('sub.good.test');
    expect(find(r, 'dmarc_ok')!.message).toMatch(/quarantine \(inherited from good\.test\)/);
  });

  test('without selectors: dkim_not_checked (info)', async () => {
    const r = await posture('good.test', { dkimSelectors: [] });
    expect(r.outcome).toBe('up');
    expect(codes(r)).toContain('dkim_not_checked');
  });
});

describe('mail_posture: MX', () => {
  test.each([
    ['nomx.test', 'mx_missing', 'critical', 'down'],
    ['deadmx.test', 'mx_unresolvable', 'critical', 'down'],
    ['halfdead.test', 'mx_unresolvable', 'warning', 'degraded'],
    ['nov6.test', 'mx_no_ipv6', 'info', 'up'],
    ['nullmx.test', 'mx_null', 'info', undefined],
  ])('%s: %s (%s)', async (domain, code, severity, outcome) => {
    const r = await posture(domain);
    expect(find(r, code)).toMatchObject({ severity });
    if (outcome) expect(r.outcome).toBe(outcome);
    if (outcome === 'down') expect(r.cause).toBe('check_failed');
  });
});

describe('mail_posture: SPF', () => {
  test.each([
    ['nospf.test', 'spf_missing', 'critical'],
    ['twospf.test', 'spf_multiple', 'critical'],
    ['plusall.test', 'spf_permissive_all', 'critical'],
    ['neutral.test', 'spf_permissive_all', 'warning'],
    ['noall.test', 'spf_all_missing', 'warning'],
    ['lookups.test', 'spf_too_many_lookups', 'critical'],
    ['loop.test', 'spf_include_loop', 'critical'],
    ['badinclude.test', 'spf_include_invalid', 'critical'],
    ['badterm.test', 'spf_invalid', 'critical'],
  ])('%s: %s (%s)', async (domain, code, severity) => {
    const r = await posture(domain);
    expect(find(r, code)).toMatchObject({ severity });
    expect(codes(r)).not.toContain('spf_ok');
    expect(r.outcome).toBe(severity === 'critical' ? 'down' : 'degraded');
  });

  test('lookups count includes recursively (8 at the top + 3 in inc1 + 0 in the provider = 11)', async () => {
    expect(find(await posture('lookups.test'), 'spf_too_many_lookups')!.message).toMatch(/needs 11 DNS lookups/);
  });

  test('redirect= supplies the all of the target', async () => {
    const r = await posture('redirect.test');
    expect(find(r, 'spf_ok')!.message).toMatch(/1 DNS lookup\)/);
  });
});

describe('mail_posture: DMARC', () => {
  test.each([
    ['nodmarc.test', 'dmarc_missing', 'critical'],
    ['twodmarc.test', 'dmarc_multiple', 'critical'],
    ['baddmarc.test', 'dmarc_invalid', 'critical'],
    ['pnone.test', 'dmarc_policy_none', 'warning'],
    ['norua.test', 'dmarc_rua_missing', 'info'],
  ])('%s: %s (%s)', async (domain, code, severity) => {
    expect(find(await posture(domain), code)).toMatchObject({ severity });
  });

  test('p=none alone degrades; no rua alone stays up', async () => {
    expect((await posture('pnone.test')).outcome).toBe('degraded');
    expect((await posture('norua.test')).outcome).toBe('up');
  });
});

describe('mail_posture: DKIM', () => {
  test('each selector is judged on its own', async () => {
    const r = await posture('dkim.test', { dkimSelectors: ['s1', 'weak', 'tiny', 'revoked', 'broken', 'ed', 'absent'] });
    const bySelector = r.detail!.findings.filter((f) => f.code.startsWith('dkim_')).map((f) => [f.code, f.severity, /selector (\S+)/.exec(f.message)?.[1]]);
    expect(bySelector).toEqual([
      ['dkim_ok', 'info', 's1:'],
      ['dkim_weak_key', 'warning', 'weak:'],
      ['dkim_weak_key', 'critical', 'tiny:'],
      ['dkim_revoked', 'critical', 'revoked'],
      ['dkim_invalid', 'critical', 'broken'],
      ['dkim_ok', 'info', 'ed:'],
      ['dkim_missing', 'critical', 'absent'],
    ]);
    expect(find(r, 'dkim_weak_key')!.message).toMatch(/1024 bits/);
    expect(r.outcome).toBe('down');
  });

  test('a 1024-bit key alone degrades', async () => {
    expect((await posture('dkim.test', { dkimSelectors: ['weak'] })).outcome).toBe('degraded');
  });
});

describe('mail_posture: MTA-STS and TLS-RPT', () => {
  test.each([
    ['nosts.test', 'mta_sts_missing', 'info', 'up'],
    ['stsnoid.test', 'mta_sts_invalid', 'warning', 'degraded'],
    ['sts404.test', 'mta_sts_policy_unreachable', 'warning', 'degraded'],
    ['stsnohost.test', 'mta_sts_policy_unreachable', 'warning', 'degraded'],
    ['stsbad.test', 'mta_sts_policy_invalid', 'warning', 'degraded'],
    ['stsmismatch.test', 'mta_sts_mx_mismatch', 'critical', 'down'],
    ['ststesting.test', 'mta_sts_mx_mismatch', 'warning', 'degraded'],
    ['ststesting.test', 'mta_sts_not_enforced', 'info', 'degraded'],
    ['notlsrpt.test', 'tlsrpt_missing', 'info', 'up'],
    ['badtlsrpt.test', 'tlsrpt_invalid', 'warning', 'degraded'],
  ])('%s: %s (%s)', async (domain, code, severity, outcome) => {
    const r = await posture(domain);
    expect(find(r, code)).toMatchObject({ severity });
    expect(r.outcome).toBe(outcome);
  });

  test('the policy fetch verifies the certificate: without the test CA it is unreachable', async () => {
    const r = await posture('good.test', {}, { net: { allowPrivate: true, extraCa: [] } });
    expect(find(r, 'mta_sts_policy_unreachable')!.message).toMatch(/certificate/i);
  });

  test('mismatch names the uncovered MX', async () => {
    expect(find(await posture('stsmismatch.test'), 'mta_sts_mx_mismatch')!.message).toMatch(/^MX mx2\.stsmismatch\.test not covered/);
  });
});

describe('mail_posture: DNS failures', () => {
  test('a domain that does not exist: down, dns_failure, domain_not_found', async () => {
    const r = await posture('absent.test');
    expect(r).toMatchObject({ outcome: 'down', cause: 'dns_failure' });
    expect(codes(r)).toEqual(['domain_not_found']);
  });

  test('SERVFAIL for the domain: down, dns_failure, dns_lookup_failed (critical)', async () => {
    const r = await posture('servfail.test');
    expect(r).toMatchObject({ outcome: 'down', cause: 'dns_failure' });
    expect(find(r, 'dns_lookup_failed')).toMatchObject({ severity: 'critical' });
  });

  test('SERVFAIL for one record: a dns_lookup_failed warning, not a false "missing"', async () => {
    const r = await posture('dmarcfail.test');
    expect(find(r, 'dns_lookup_failed')).toMatchObject({ severity: 'warning', message: expect.stringMatching(/_dmarc\.dmarcfail\.test/) });
    expect(codes(r)).not.toContain('dmarc_missing');
    expect(r.outcome).toBe('degraded');
  });

  test('a private resolver is refused when the policy forbids private addresses', async () => {
    const r = await posture('good.test', {}, { net: { allowPrivate: false, extraCa: [] } });
    expect(r).toMatchObject({ outcome: 'down', cause: 'dns_failure' });
    expect(r.message).toMatch(/private address/);
  });

  test('config: mtaStsPort is optional; resolver takes ip:port', () => {
    expect(parseConfig('mail_posture', JSON.stringify({ domain: 'good.test' }))).toEqual({ domain: 'good.test', dkimSelectors: [], resolver: null });
    expect(parseConfig('mail_posture', JSON.stringify({ domain: 'good.test', resolver: '127.0.0.1:5353', mtaStsPort: 8443 }))).toMatchObject({ mtaStsPort: 8443 });
  });
});
