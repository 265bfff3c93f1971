import { ok } from './support/expect';
import { startTestServer, type TestServer } from './support/harness';

// A server without a mail server (SMTP_URL unset, as a fresh `npm start`):
// POST /members still answers 201 and keeps the invitation (nobody refused
// it), which is listed apart from the members and can be withdrawn; no
// account is created.

let server: TestServer;

beforeAll(async () => { server = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' }); });
afterAll(async () => { await server.close(); });

test('an invitation without SMTP_URL is kept: 201, listed under invitations, no account, withdrawable', async () => {
  const org = await server.org({ plan: 'business' });
  const owner = server.api(org.apiKey);
  const inv = ok('inviteMember', await owner.post('/members', { email: 'Nomail@example.test', role: 'viewer', workspaceIds: [org.workspaceId] }), 201);
  expect(inv).toMatchObject({ email: 'Nomail@example.test', role: 'viewer', workspaceIds: [org.workspaceId] });
  expect(await server.db.selectFrom('users').select('id').where('email', 'ilike', 'nomail@example.test').execute()).toEqual([]);
  const listed = ok('listMembers', await owner.get('/members'));
  expect(listed.invitations).toEqual([expect.objectContaining({ id: inv.id, email: 'Nomail@example.test' })]);
  expect(listed.members.map((m: any) => m.email)).not.toContain('Nomail@example.test');
  // Inviting again replaces it (one pending invitation per address).
  const again = ok('inviteMember', await owner.post('/members', { email: 'nomail@example.test', role: 'member' }), 201);
  expect(ok('listMembers', await owner.get('/members')).invitations.map((i: any) => i.id)).toEqual([again.id]);
  expect((await owner.delete(`/invitations/${again.id}`)).status).toBe(200);
  expect(ok('listMembers', await owner.get('/members')).invitations).toEqual([]);
});
