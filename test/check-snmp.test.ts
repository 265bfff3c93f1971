// The snmp kind against net-snmp's own agent on 127.0.0.1: v2c and v3 reads,
// value decoding, missing OIDs, thresholds, network policy and timeouts.
import dns from 'node:dns';
import * as snmp from 'net-snmp';
import type { CheckContext, CheckResult } from '../src/engine/kinds/kind';
import { snmp as kind } from '../src/engine/kinds/snmp';
import { counter64 as decode64, octets } from '../src/engine/snmp/readings';
import { counter64, startAgent, type TestAgent } from './support/snmp-agent';

const BASE = '1.3.6.1.4.1.55555.1';
const T = snmp.ObjectType;
const COMMUNITY = 'c0mmun1ty-s3cret';
const AUTH_PASS = 'auth-pass-s3cret';
const PRIV_PASS = 'priv-pass-s3cret';

const scalars = [
  { name: 'int', oid: `${BASE}.1`, type: T.Integer, value: -42 },
  { name: 'gauge', oid: `${BASE}.2`, type: T.Gauge, value: 77 },
  { name: 'c64', oid: `${BASE}.3`, type: T.Counter64, value: counter64(5_000_000_000n) },
  { name: 'str', oid: `${BASE}.4`, type: T.OctetString, value: 'core-switch-1' },
  { name: 'ticks', oid: `${BASE}.5`, type: T.TimeTicks, value: 123456 },
  { name: 'bin', oid: `${BASE}.6`, type: T.OctetString, value: Buffer.from([0x00, 0x1a, 0x2b, 0xff]) },
  { name: 'oid', oid: `${BASE}.7`, type: T.OID, value: '1.3.6.1.4.1.8072' },
  { name: 'ip', oid: `${BASE}.8`, type: T.IpAddress, value: '10.1.2.3' },
  { name: 'c32', oid: `${BASE}.9`, type: T.Counter, value: 4_000_000_000 },
  { name: 'big64', oid: `${BASE}.10`, type: T.Counter64, value: counter64(2n ** 60n + 1n) },
];
const oid = (n: number) => `${BASE}.${n}.0`;

let agent: TestAgent;

beforeAll(async () => {
  agent = await startAgent({
    communities: [COMMUNITY],
    users: [
      { name: 'alice', level: snmp.SecurityLevel.authPriv, authProtocol: snmp.AuthProtocols.sha, authKey: AUTH_PASS, privProtocol: snmp.PrivProtocols.aes, privKey: PRIV_PASS },
      { name: 'bob', level: snmp.SecurityLevel.authPriv, authProtocol: snmp.AuthProtocols.sha512, authKey: AUTH_PASS, privProtocol: snmp.PrivProtocols.aes256b, privKey: PRIV_PASS },
      { name: 'carol', level: snmp.SecurityLevel.authNoPriv, authProtocol: snmp.AuthProtocols.sha256, authKey: AUTH_PASS },
    ],
    scalars,
  });
});

afterAll(async () => {
  await agent.close();
});

function ctx(over: Partial<CheckContext> = {}): CheckContext {
  return { monitorId: 'm', intervalSeconds: 60, now: new Date(), signal: AbortSignal.timeout(15000), net: { allowPrivate: true, extraCa: [] }, ...over };
}

function v2c(config: Record<string, unknown>) {
  return { host: '127.0.0.1', port: agent.port, version: 'v2c', community: COMMUNITY, assertions: [], ...config };
}

function v3(config: Record<string, unknown>) {
  return {
    host: '127.0.0.1', port: agent.port, version: 'v3', username: 'alice', securityLevel: 'authPriv',
    authProtocol: 'SHA', authPassword: AUTH_PASS, privProtocol: 'AES', privPassword: PRIV_PASS, assertions: [], ...config,
  };
}

/** Runs the check; snmp always concludes something, so null would be a bug. */
async function run(config: Record<string, unknown>, context: CheckContext): Promise<CheckResult> {
  const result = await kind.check(config, context);
  if (result === null) throw new Error('the snmp check returned null');
  return result;
}

/** No credential may show in anything the check returns. */
function expectNoSecrets(result: CheckResult) {
  const text = JSON.stringify(result);
  for (const s of [COMMUNITY, AUTH_PASS, PRIV_PASS]) expect(text).not.toContain(s);
}

describe('snmp v2c', () => {
  test('reads integer, gauge, counter64, octet string, timeticks and more in one GET', async () => {
    const r = await run(v2c({
      oids: [
        { oid: oid(1), name: 'temp', unit: 'Cel' }, { oid: oid(2), name: 'load', unit: '%' }, { oid: `.${oid(3)}`, name: 'octets', unit: 'By' },
        { oid: oid(4), name: 'sysName' }, { oid: oid(5), name: 'uptime', unit: 'cs' }, { oid: oid(6), name: 'mac' },
        { oid: oid(7), name: 'objectId' }, { oid: oid(8), name: 'addr' }, { oid: oid(9) }, { oid: oid(10), name: 'huge' },
      ],
    }), ctx());
    expect(r.outcome).toBe('up');
    expect(r.cause).toBeNull();
    expect(r.message).toMatch(/^10 readings in \d+ ms$/);
    expect(typeof r.responseTimeMs).toBe('number');
    expect(r.detail?.grade).toBeNull();
    expect(r.detail?.findings).toEqual([]);
    expect(r.detail?.readings).toEqual([
      { name: 'temp', oid: oid(1), value: -42, text: null, unit: 'Cel' },
      { name: 'load', oid: oid(2), value: 77, text: null, unit: '%' },
      { name: 'octets', oid: oid(3), value: 5_000_000_000, text: null, unit: 'By' },
      { name: 'sysName', oid: oid(4), value: null, text: 'core-switch-1', unit: null },
      { name: 'uptime', oid: oid(5), value: 123456, text: null, unit: 'cs' },
      { name: 'mac', oid: oid(6), value: null, text: '00 1a 2b ff', unit: null },
      { name: 'objectId', oid: oid(7), value: null, text: '1.3.6.1.4.1.8072', unit: null },
      { name: 'addr', oid: oid(8), value: null, text: '10.1.2.3', unit: null },
      { name: oid(9), oid: oid(9), value: 4_000_000_000, text: null, unit: null },
      { name: 'huge', oid: oid(10), value: Number(2n ** 60n + 1n), text: (2n ** 60n + 1n).toString(), unit: null },
    ]);
    expectNoSecrets(r);
  });

  test('a wrong community goes unanswered: down, timeout, community not quoted', async () => {
    const r = await run(v2c({ community: 'not-the-community', oids: [{ oid: oid(1) }] }), ctx());
    expect(r).toMatchObject({ outcome: 'down', cause: 'timeout', responseTimeMs: null });
    expect(r.message).toContain(`127.0.0.1:${agent.port}`);
    expect(r.message).toContain('within 5 s');
    expect(r.message).not.toContain('not-the-community');
    // The datagram did arrive: the agent refused it, rather than it being lost.
    expect(agent.errors.some((e) => e.message.includes('not-the-community'))).toBe(true);
    expect(r.detail).toEqual({ findings: [], grade: null, readings: [] });
  });

  test('a missing OID is a failed reading and an oid_missing finding', async () => {
    const r = await run(v2c({ oids: [{ oid: oid(1), name: 'temp' }, { oid: `${BASE}.99.0`, name: 'fan' }, { oid: `${oid(1)}.5` }] }), ctx());
    expect(r).toMatchObject({ outcome: 'down', cause: 'check_failed' });
    expect(r.detail?.readings).toEqual([
      { name: 'temp', oid: oid(1), value: -42, text: null, unit: null },
      { name: 'fan', oid: `${BASE}.99.0`, value: null, text: 'noSuchObject', unit: null },
      { name: `${oid(1)}.5`, oid: `${oid(1)}.5`, value: null, text: 'noSuchInstance', unit: null },
    ]);
    const findings = r.detail!.findings;
    expect(findings.map((f) => [f.code, f.severity])).toEqual([['oid_missing', 'critical'], ['oid_missing', 'critical']]);
    expect(findings[0].message).toContain(`${BASE}.99.0 (fan)`);
    expect(findings[1].message).toContain(`${oid(1)}.5`);
    expect(r.message).toBe(`${findings[0].message} (and 1 more)`);
  });

  test('passing assertions on values and text: up', async () => {
    const r = await run(v2c({
      oids: [{ oid: oid(2), name: 'load', unit: '%' }, { oid: oid(4), name: 'sysName' }],
      assertions: [
        { reading: 'load', operator: 'lt', value: '90' },
        { reading: 'sysName', operator: 'contains', value: 'switch' },
      ],
    }), ctx());
    expect(r.outcome).toBe('up');
    expect(r.detail?.findings).toEqual([]);
  });

  test('a failing assertion: threshold_breached, down with assertion_failed', async () => {
    const r = await run(v2c({
      oids: [{ oid: oid(2), name: 'load', unit: '%' }, { oid: oid(1), name: 'temp' }],
      assertions: [{ reading: 'load', operator: 'lt', value: '50' }, { reading: 'temp', operator: 'gte', value: '-50' }],
    }), ctx());
    expect(r).toMatchObject({ outcome: 'down', cause: 'assertion_failed', message: 'load 77 is not < 50' });
    expect(r.detail?.findings).toEqual([{ code: 'threshold_breached', severity: 'critical', message: 'load 77 is not < 50' }]);
    expect(r.detail?.readings).toHaveLength(2);
  });

  test('an assertion naming no configured reading: unknown_reading', async () => {
    const r = await run(v2c({
      oids: [{ oid: oid(2), name: 'load' }],
      assertions: [{ reading: 'cpu', operator: 'lt', value: '90' }, { reading: 'load', operator: 'lt', value: '90' }],
    }), ctx());
    expect(r).toMatchObject({ outcome: 'down', cause: 'check_failed' });
    expect(r.detail?.findings).toEqual([{ code: 'unknown_reading', severity: 'critical', message: expect.stringContaining('"cpu"') }]);
  });

  test('an assertion on a missing OID adds nothing to its oid_missing finding', async () => {
    const r = await run(v2c({ oids: [{ oid: `${BASE}.99.0`, name: 'fan' }], assertions: [{ reading: 'fan', operator: 'gt', value: '0' }] }), ctx());
    expect(r.cause).toBe('check_failed');
    expect(r.detail?.findings.map((f) => f.code)).toEqual(['oid_missing']);
  });
});

describe('snmp v3', () => {
  test('authPriv with SHA and AES reads', async () => {
    const r = await run(v3({ oids: [{ oid: oid(1), name: 'temp' }, { oid: oid(4), name: 'sysName' }] }), ctx());
    expect(r.outcome).toBe('up');
    expect(r.detail?.readings.map((x) => x.value ?? x.text)).toEqual([-42, 'core-switch-1']);
    expectNoSecrets(r);
  });

  test('authPriv with SHA-512 and AES-256, and authNoPriv with SHA-256, read', async () => {
    const a = await run(v3({ username: 'bob', authProtocol: 'SHA-512', privProtocol: 'AES-256', oids: [{ oid: oid(2) }] }), ctx());
    expect(a.outcome).toBe('up');
    expect(a.detail?.readings[0].value).toBe(77);
    const b = await run(v3({ username: 'carol', securityLevel: 'authNoPriv', authProtocol: 'SHA-256', privPassword: undefined, oids: [{ oid: oid(2) }] }), ctx());
    expect(b.outcome).toBe('up');
  });

  test('a wrong password: down, the message hints at credentials and quotes none', async () => {
    const r = await run(v3({ authPassword: 'wrong-password-1', oids: [{ oid: oid(1) }] }), ctx());
    expect(r).toMatchObject({ outcome: 'down', cause: 'timeout' });
    expect(r.message).toContain('SNMPv3');
    expect(r.message).toContain('wrong password');
    expect(r.message).not.toContain('wrong-password-1');
    expectNoSecrets(r);
  });

  test('an unknown user: the agent reports it, down with connection_failed', async () => {
    const r = await run(v3({ username: 'mallory', oids: [{ oid: oid(1) }] }), ctx());
    expect(r).toMatchObject({ outcome: 'down', cause: 'connection_failed' });
    expect(r.message).toContain('SNMPv3 authentication failed');
    expect(r.message).toContain('Unknown User Name');
    expect(typeof r.responseTimeMs).toBe('number');
    expectNoSecrets(r);
  });

  test('a weaker security level than the user requires: authentication failed', async () => {
    const r = await run(v3({ securityLevel: 'authNoPriv', oids: [{ oid: oid(1) }] }), ctx());
    expect(r).toMatchObject({ outcome: 'down', cause: 'connection_failed' });
    expect(r.message).toContain('SNMPv3 authentication failed');
  });

  test('a config lacking the v3 credentials its level needs: check_failed, nothing sent', async () => {
    const r = await run(v3({ username: undefined, oids: [{ oid: oid(1) }] }), ctx());
    expect(r).toMatchObject({ outcome: 'down', cause: 'check_failed', message: 'SNMPv3 needs a username' });
    const p = await run(v3({ privPassword: undefined, oids: [{ oid: oid(1) }] }), ctx());
    expect(p).toMatchObject({ outcome: 'down', cause: 'check_failed', message: 'SNMPv3 authPriv needs a privPassword' });
  });
});

describe('snmp network policy and time', () => {
  test('allowPrivate false refuses 127.0.0.1 and localhost before sending', async () => {
    const net = { allowPrivate: false, extraCa: [] };
    // An unknown community would show in the agent's errors had anything been sent.
    const r = await run(v2c({ community: 'policy-probe', oids: [{ oid: oid(1) }] }), ctx({ net }));
    expect(r).toMatchObject({ outcome: 'down', cause: 'connection_failed', responseTimeMs: null });
    expect(r.message).toContain('private address');
    const l = await run(v2c({ community: 'policy-probe', host: 'localhost', oids: [{ oid: oid(1) }] }), ctx({ net }));
    expect(l).toMatchObject({ outcome: 'down', cause: 'connection_failed' });
    expect(l.message).toContain('private address');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(agent.errors.some((e) => e.message.includes('policy-probe'))).toBe(false);
  });

  test('a hostname resolves and reads', async () => {
    // The check takes the first address; the agent listens on 127.0.0.1 only.
    const first = await dns.promises.lookup('localhost');
    if (first.address !== '127.0.0.1') return;
    const r = await run(v2c({ host: 'localhost', oids: [{ oid: oid(1) }] }), ctx());
    expect(r.outcome).toBe('up');
    expect(r.detail?.readings[0].value).toBe(-42);
  });

  test('an unresolvable name: dns_failure', async () => {
    const r = await run(v2c({ host: 'no-such-host.invalid', oids: [{ oid: oid(1) }] }), ctx());
    expect(r).toMatchObject({ outcome: 'down', cause: 'dns_failure' });
  });

  test('the check signal cuts the wait short: timeout', async () => {
    const started = Date.now();
    const r = await run(v2c({ community: 'unanswered', oids: [{ oid: oid(1) }] }), ctx({ signal: AbortSignal.timeout(300) }));
    expect(r).toMatchObject({ outcome: 'down', cause: 'timeout' });
    expect(r.message).toContain('ran out of time');
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('snmp value decoding', () => {
  test('octet strings: UTF-8 text, trailing NULs dropped, else hex', () => {
    expect(octets(Buffer.from('Zürich rack 3'))).toBe('Zürich rack 3');
    expect(octets(Buffer.from('eth0\0\0'))).toBe('eth0');
    expect(octets(Buffer.from([0xc3, 0x28]))).toBe('c3 28');
    expect(octets(Buffer.from([0x41, 0x07]))).toBe('41 07');
    expect(octets(Buffer.from([0, 0, 0, 0, 0, 0]))).toBe('00 00 00 00 00 00');
    expect(octets(Buffer.alloc(0))).toBe('');
  });

  test('counter64 of any BER length, exact digits past 2^53', () => {
    expect(decode64(Buffer.from([0x00, 0xff]))).toEqual({ value: 255, text: null });
    expect(decode64(Buffer.from([0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]))).toEqual({ value: 18446744073709552000, text: '18446744073709551615' });
  });
});
