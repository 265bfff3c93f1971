import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execTracked, spawnTracked, tempDir } from './support/child';

// `npm start` on a fresh machine: no DATABASE_URL, an embedded PostgreSQL under
// DATA_DIR, an owner key printed once, the operator CLI working beside it.

const ROOT = path.resolve(__dirname, '..');
const TSX = path.join(ROOT, 'node_modules/.bin/tsx');
const run = execTracked;
let dataDir: string;

function envFor(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  return env;
}

/** Starts `src/main.ts` and resolves once it prints its address. */
function start(): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawnTracked(TSX, ['src/main.ts'], { cwd: ROOT, env: envFor(), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => { out += d; });
  child.stderr!.on('data', (d) => { out += d; });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start within 60 s:\n${out}`)), 60_000);
    const poll = setInterval(() => {
      const m = /listening at (http:\/\/\S+) /.exec(out);
      if (m) { clearInterval(poll); clearTimeout(timer); resolve({ child, url: m[1], output: () => out }); }
    }, 50);
    child.once('exit', (code) => { clearInterval(poll); clearTimeout(timer); reject(new Error(`exited ${code}:\n${out}`)); });
  });
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => { child.once('exit', (code) => resolve(code)); child.kill('SIGTERM'); });
}

beforeAll(() => { dataDir = tempDir('vigil-start-'); });
afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

test('first start on an empty data folder: embedded database, owner key printed once, CLI beside it, clean stop', async () => {
  const first = await start();
  try {
    await new Promise((r) => setTimeout(r, 200));
    const key = /(vk_[A-Za-z0-9_-]{43})/.exec(first.output())?.[1];
    expect(key).toBeDefined();
    const me = await fetch(`${first.url}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } });
    expect(me.status).toBe(200);
    expect((await me.json()).data.membership.role).toBe('owner');
    expect(fs.existsSync(path.join(dataDir, 'pg', 'PG_VERSION'))).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'master.key'))).toBe(true);

    // The operator CLI reaches the embedded database the server is running.
    const org = JSON.parse((await run(TSX, ['src/cli/index.ts', 'org', 'create', '--name', 'Acme', '--owner-email', 'ops@acme.test', '--plan', 'pro'], { cwd: ROOT, env: envFor() })).stdout);
    expect(org).toEqual({ organizationId: expect.stringMatching(/^org_/), workspaceId: expect.stringMatching(/^ws_/), userId: expect.stringMatching(/^usr_/), membershipId: expect.any(String), apiKey: expect.stringMatching(/^vk_/) });
    const viewer = JSON.parse((await run(TSX, ['src/cli/index.ts', 'member', 'add', '--org', org.organizationId, '--email', 'v@acme.test', '--role', 'viewer'], { cwd: ROOT, env: envFor() })).stdout);
    expect(viewer.apiKey).toMatch(/^vk_/);
    const acme = await (await fetch(`${first.url}/api/v1/me`, { headers: { authorization: `Bearer ${viewer.apiKey}` } })).json();
    expect(acme.data.organization).toMatchObject({ id: org.organizationId, plan: 'pro' });
    expect(acme.data.membership.role).toBe('viewer');

    // An operator sets a person's sign-in password (stored as a slow hash).
    const pw = JSON.parse((await run(TSX, ['src/cli/index.ts', 'user', 'password', '--email', 'v@acme.test', '--password', 'correct horse 42'], { cwd: ROOT, env: envFor() })).stdout);
    expect(pw).toEqual({ userId: viewer.userId, email: 'v@acme.test' });
    const weak = await run(TSX, ['src/cli/index.ts', 'user', 'password', '--email', 'v@acme.test', '--password', 'short'], { cwd: ROOT, env: envFor() }).catch((e) => e);
    expect(weak.code).toBe(2);

    const bad = await run(TSX, ['src/cli/index.ts', 'member', 'add', '--org', org.organizationId, '--email', 'x@acme.test', '--role', 'emperor'], { cwd: ROOT, env: envFor() }).catch((e) => e);
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stderr).error).toMatch(/unknown role/);
  } finally {
    expect(await stop(first.child)).toBe(0);
  }
  expect(fs.existsSync(path.join(dataDir, 'pg.port'))).toBe(false);
  // A newcomer sees only Vigil's own lines: PostgreSQL's chatter (and the harmless
  // ERROR of a first start) is in DATA_DIR/postgres.log, not on the terminal.
  const printed = first.output().trim().split('\n');
  for (const line of printed) {
    if (line.startsWith('{')) expect(JSON.parse(line)).toMatchObject({ level: 'info' });
    else expect(line).toMatch(/^(Vigil is listening at |First start: created an organisation|  vk_|Set the owner's password and sign in |  http:\/\/127\.0\.0\.1:\d+\/password-reset\/pr_[A-Za-z0-9_-]{43}$)/);
  }
  // Besides the key, the owner's one-time link to set a password and land signed in (test/first-owner.test.ts follows it).
  expect(first.output()).toMatch(/Set the owner's password and sign in \(owner@localhost; one-time link, valid 24 hours\):\n {2}http:\/\/127\.0\.0\.1:\d+\/password-reset\/pr_/);
  expect(first.output()).not.toMatch(/error|postgres|initdb/i);
  expect(fs.readFileSync(path.join(dataDir, 'postgres.log'), 'utf8')).toMatch(/database system is ready to accept connections/);

  // A second start on the same folder keeps the data and prints no new key.
  const second = await start();
  try {
    await new Promise((r) => setTimeout(r, 200));
    expect(second.output()).not.toMatch(/vk_|password-reset/);
  } finally {
    expect(await stop(second.child)).toBe(0);
  }
}, 120_000);
