import type { Browser, Page } from 'playwright-core';
import { setPassword } from '../src/domain/organizations';
import { ok, until } from './support/expect';
import { startTestServer, type ApiClient, type TestServer } from './support/harness';
import snmp from 'net-snmp';
import { axe, ensureWebBuilt, launch, open, signIn, type Watched } from './support/web';
import { checkNow } from './support/monitors';
import { startAgent, type TestAgent } from './support/snmp-agent';

// The create form for every monitor kind, its fields from the contract's
// config documents: each kind's monitor is created through the form and
// reads back with that kind; a refused config field (an agent that does not
// exist) is shown at its field; an edit that leaves the check's settings
// empty keeps them.

const PASSWORD = 'forms test password 1';
let server: TestServer;
let api: ApiClient;
let browser: Browser;
let email: string;
let w: Watched;
let snmpAgent: TestAgent;

/** The fields to fill per kind (label → value), beyond the name. */
const KINDS: Array<[string, string, Record<string, string>]> = [
  ['http', 'HTTP', { URL: 'http://127.0.0.1:9/health', 'Timeout (seconds)': '5', Assertions: '[{"type":"status_code","operator":"lt","value":"400"}]' }],
  ['heartbeat', 'Heartbeat', { 'Grace (seconds)': '120' }],
  ['tcp', 'TCP port', { Host: '127.0.0.1', Port: '9' }],
  ['dns', 'DNS', { 'Name to resolve': 'example.invalid', 'Expected answers': '192.0.2.1\n192.0.2.2' }],
  ['tls_audit', 'TLS audit', { Host: '127.0.0.1', Port: '9', 'Warn days before expiry': '21' }],
  ['mail_posture', 'Mail posture', { 'Mail domain': 'example.invalid', 'DKIM selectors': 'default' }],
  ['snmp', 'SNMP', { Host: '127.0.0.1', 'Community (v2c)': 'public', OIDs: '[{"oid":"1.3.6.1.2.1.1.3.0","name":"uptime","unit":"s"}]' }],
];

beforeAll(async () => {
  ensureWebBuilt();
  browser = await launch();
  snmpAgent = await startAgent({ communities: ['web-community'], scalars: [{ name: 'load', oid: '1.3.6.1.4.1.55555.2.1', type: snmp.ObjectType.Gauge, value: 77 }] });
  server = await startTestServer({ WORKER: 'true', RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  const org = await server.org({ plan: 'enterprise' });
  api = server.api(org.apiKey);
  email = (await server.db.selectFrom('users').innerJoin('memberships', 'memberships.user_id', 'users.id')
    .select('users.email').where('memberships.organization_id', '=', org.organizationId).executeTakeFirstOrThrow()).email;
  await setPassword(server.db, email, PASSWORD);
  // The 400s are the server refusing a config field, on purpose.
  w = await open(browser, server.url, { expectedStatuses: [401, 400] });
  await signIn(w.page, server.url, email, PASSWORD);
}, 180_000);
afterAll(async () => {
  expect({ problems: w?.problems, foreign: w?.foreign }).toEqual({ problems: [], foreign: [] });
  await w?.context.close().catch(() => undefined);
  await browser?.close();
  await server?.close();
  await snmpAgent?.close();
});

async function newMonitor(p: Page, name: string, kindLabel: string, fields: Record<string, string>) {
  await p.goto(`${server.url}/monitors/new`);
  await p.getByRole('heading', { name: 'New monitor' }).waitFor();
  await p.getByLabel('Name', { exact: true }).fill(name);
  await p.getByLabel('Kind').selectOption({ label: kindLabel });
  await p.getByLabel('Check every (seconds)').fill('3600');
  for (const [label, value] of Object.entries(fields)) await p.getByLabel(label, { exact: true }).fill(value);
  await p.getByRole('button', { name: 'Create the monitor' }).click();
}

test.each(KINDS)('a %s monitor created through its form', async (kind, label, fields) => {
  const p = w.page;
  await newMonitor(p, `Form ${kind}`, label, fields);
  await p.getByRole('heading', { name: `Form ${kind}` }).waitFor();
  const id = new URL(p.url()).pathname.split('/').pop()!;
  const m = ok('getMonitor', await api.get(`/monitors/${id}`));
  expect({ kind: m.kind, interval: m.intervalSeconds }).toEqual({ kind, interval: 3600 });
  if (kind === 'http') expect(await axe(p, 'monitor-detail-http')).toEqual([]);
}, 60_000);

test('an agent that does not exist: the server\'s refusal at the Agent field', async () => {
  const p = w.page;
  await newMonitor(p, 'Form agent', 'Server agent', { Agent: 'agt_nope' });
  const field = p.getByLabel('Agent', { exact: true });
  await until('the field error', async () => (await field.getAttribute('aria-invalid')) === 'true');
  expect(await axe(p, 'agent-form-error')).toEqual([]);
}, 60_000);

test('an edit that leaves the check\'s settings empty keeps them; a new name and tags are saved', async () => {
  const p = w.page;
  const created = ok('createMonitor', await api.post('/monitors', {
    name: 'To edit', kind: 'tcp', workspaceId: (await api.get('/workspaces')).body.data[0].id, intervalSeconds: 3600, config: JSON.stringify({ host: '127.0.0.1', port: 9 }),
  }), 201);
  const sealed = async () => (await server.db.selectFrom('monitors').select('config_enc').where('id', '=', created.id).executeTakeFirstOrThrow()).config_enc;
  const before = await sealed();
  await p.goto(`${server.url}/monitors/${created.id}/edit`);
  await p.getByRole('heading', { name: 'Edit To edit' }).waitFor();
  await p.getByLabel('Name', { exact: true }).fill('Edited');
  await p.getByLabel('Tags').fill('db, Primary');
  await p.getByRole('button', { name: 'Save changes' }).click();
  await p.getByRole('heading', { name: 'Edited' }).waitFor();
  const m = ok('getMonitor', await api.get(`/monitors/${created.id}`));
  expect({ name: m.name, tags: m.tags }).toEqual({ name: 'Edited', tags: ['db', 'primary'] });
  // The sealed config is the very same ciphertext: not sent, not replaced.
  expect(await sealed()).toBe(before);
}, 60_000);

test('an SNMP monitor made through the form shows its readings on its page', async () => {
  const p = w.page;
  await newMonitor(p, 'Core switch', 'SNMP', {
    Host: '127.0.0.1', Port: String(snmpAgent.port), 'Community (v2c)': 'web-community',
    OIDs: '[{"oid":"1.3.6.1.4.1.55555.2.1.0","name":"load","unit":"%"}]',
  });
  await p.getByRole('heading', { name: 'Core switch' }).waitFor();
  const id = new URL(p.url()).pathname.split('/').pop()!;
  await checkNow(server, api, id);
  await p.reload();
  const readings = p.getByRole('region', { name: 'SNMP readings' });
  await readings.getByRole('cell', { name: '77 %' }).waitFor();
  await readings.getByRole('cell', { name: 'load' }).waitFor();
  expect(await axe(p, 'snmp-detail')).toEqual([]);
}, 60_000);
