/**
 * GET /me `membership.permissions`: what the caller may do, as the pipeline
 * decides it (role, key scopes, plan), so that a client (the web app) shows
 * exactly the controls that would work — checked against the operations.
 */
import { PERMISSIONS } from '../src/auth/roles';
import { startTestServer, type TestServer } from './support/harness';
import { ok } from './support/expect';

let server: TestServer;
beforeAll(async () => { server = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' }); }, 60_000);
afterAll(async () => { await server?.close(); });

const me = async (key: string) => ok('getMe', await server.api(key).get('/me')).membership;

test('each caller is told the permissions its requests hold, and they match what the operations let through', async () => {
  const business = await server.org({ plan: 'business' });
  const free = await server.org({ plan: 'free' });
  expect((await me(business.apiKey)).permissions).toEqual([...PERMISSIONS]);
  // The plan narrows: no audit log below Business.
  expect((await me(free.apiKey)).permissions).toEqual(PERMISSIONS.filter((p) => p !== 'audit_log:read'));
  expect((await server.api(free.apiKey).get('/audit')).status).toBe(403);

  const viewer = await server.member(business.organizationId, 'viewer');
  const v = await me(viewer.apiKey);
  expect(v.permissions).toEqual(['monitor:read', 'incident:read', 'status_page:read', 'notification_channel:read', 'workspace:read', 'member:read', 'oncall:read', 'agent:read']);
  expect((await server.api(viewer.apiKey).post('/monitors', { name: 'x', kind: 'http', workspaceId: business.workspaceId, config: '{"url":"http://127.0.0.1:9/"}' })).status).toBe(403);

  // A key's scopes narrow its creator's role.
  const scoped = ok('createApiKey', await server.api(business.apiKey).post('/api-keys', { name: 'reads monitors', scopes: ['monitor:read', 'monitor:pause'] }), 201);
  expect((await me(scoped.token)).permissions).toEqual(['monitor:read', 'monitor:pause']);
  expect((await server.api(scoped.token).get('/incidents')).status).toBe(403);

  // Confinement is said beside them: the same permissions, within these workspaces.
  const confined = await server.member(business.organizationId, 'member', [business.workspaceId]);
  const c = await me(confined.apiKey);
  expect(c.workspaceIds).toEqual([business.workspaceId]);
  expect(c.permissions).toContain('monitor:create');
  expect(c.permissions).not.toContain('member:invite');
});
