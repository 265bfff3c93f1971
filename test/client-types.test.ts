import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { routes } from '../gen/routes';
import { startTestServer, type TestServer } from './support/harness';
import { ROOT, tempDir, execTracked } from './support/child';

// A new user's client, made with tooling the project did not write: types
// generated from the served contract by openapi-typescript with its default
// options, used through openapi-fetch. The README's quick start (curl and
// TypeScript) is run exactly as written, and a client reading every live list
// operation type-checks and works.

let server: TestServer;
let key: string;
let dir: string;
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The fenced block after `<!-- quickstart:<name> -->` in the README. */
function readmeBlock(name: string): string {
  const m = new RegExp(`<!-- quickstart:${name} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\`\`\``).exec(README);
  if (!m) throw new Error(`README has no quickstart:${name} block`);
  return m[1];
}

const asServed = (text: string) => text.replaceAll('http://127.0.0.1:8080', server.url);

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_READ: '100000', RATE_LIMIT_WRITE: '100000' });
  key = (await server.org({ plan: 'enterprise' })).apiKey;
  dir = tempDir('vigil-client-');
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  fs.writeFileSync(path.join(dir, 'openapi.json'), await (await fetch(`${server.url}/openapi.json`)).text());
  // Default options, as the README tells a user to run it.
  execFileSync(path.join(ROOT, 'node_modules/.bin/openapi-typescript'), ['openapi.json', '-o', 'vigil.d.ts'], { cwd: dir, stdio: 'pipe' });
}, 60_000);

afterAll(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** tsc's complaints about `files`, strict, as a user's ES module project would check them. */
function typeErrors(files: string[]): string[] {
  const program = ts.createProgram(files.map((f) => path.join(dir, f)), {
    strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler, lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'], types: ['node'], skipLibCheck: true,
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file ? `${path.basename(d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}` : '';
    return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  });
}

// The server runs in this process: children that call it must not block its event loop.
const run = execTracked;

async function runModule(file: string): Promise<string> {
  return (await run(process.execPath, ['--import', 'tsx', file], { cwd: dir, env: { ...process.env, VIGIL_KEY: key } })).stdout;
}

test('optional request fields stay optional in the default generated types; fields always present are required', () => {
  const types = fs.readFileSync(path.join(dir, 'vigil.d.ts'), 'utf8');
  const body = /CreateMonitorBody: \{([\s\S]*?)\n {8}\};/.exec(types)![1];
  expect(body).toMatch(/\bintervalSeconds\?: number;/);
  expect(body).toMatch(/\bconfirmations\?: number;/);
  expect(body).toMatch(/\bname: string;/);
  const monitor = /\n {8}Monitor: \{([\s\S]*?)\n {8}\};/.exec(types)![1];
  expect(monitor).toMatch(/\bstatus: "up" \| "degraded" \| "down" \| "paused" \| "pending";/);
  expect(monitor).toMatch(/\bintervalSeconds: number;/);
});

test('the README TypeScript quick start type-checks against the default types and creates a monitor', async () => {
  fs.writeFileSync(path.join(dir, 'quickstart.mts'), asServed(readmeBlock('ts')));
  expect(typeErrors(['quickstart.mts'])).toEqual([]);
  expect(await runModule('quickstart.mts')).toMatch(/^Example (pending|up|down)\n$/);
});

test('a client reading every live list operation type-checks and gets 200 from each', async () => {
  // Read with an API key: the session-only lists (sessions, organisations) answer keys 403 by design.
  // The event stream never ends (it is read with EventSource, docs/stream.md): not a list a client awaits.
  const lists = routes.filter((r) => r.method === 'GET' && r.built && !r.sessionOnly && r.pathParams.length === 0 && r.path !== '/' && r.operationId !== 'streamEvents');
  expect(lists.length).toBeGreaterThan(10);
  // Required query parameters (the search's `q`) get a value; a file (the export zip) is read as bytes, not JSON.
  const options = (r: (typeof lists)[number]) => {
    const req = r.queryParams.filter((q) => q.required);
    const parts: string[] = [];
    if (req.length) parts.push(`params: { query: { ${req.map((q) => `${q.name}: ${q.type === 'integer' ? '1' : "'x'"}`).join(', ')} } }`);
    if (r.rawResponse) parts.push("parseAs: 'arrayBuffer'");
    return parts.length ? `, { ${parts.join(', ')} }` : '';
  };
  const calls = lists.map((r) => `  ['${r.path}', (await vigil.GET('${r.path}'${options(r)})).response.status],`).join('\n');
  fs.writeFileSync(path.join(dir, 'lists.mts'), `import createClient from 'openapi-fetch';
import type { paths } from './vigil';
const vigil = createClient<paths>({ baseUrl: '${server.url}/api/v1', headers: { Authorization: \`Bearer \${process.env.VIGIL_KEY}\` } });
const statuses: Array<[string, number]> = [
${calls}
];
const { data } = await vigil.GET('/monitors');
const names: string[] = (data?.data ?? []).map((m) => m.name);
console.log(JSON.stringify({ statuses, names }));
`);
  expect(typeErrors(['lists.mts'])).toEqual([]);
  const { statuses } = JSON.parse(await runModule('lists.mts')) as { statuses: Array<[string, number]> };
  expect(statuses.filter(([, s]) => s !== 200)).toEqual([]);
  expect(statuses).toHaveLength(lists.length);
});

test('the README curl quick start works as written', async () => {
  const lines = readmeBlock('sh').split('\n').filter((l) => l.startsWith('curl '));
  expect(lines).toHaveLength(3);
  const sh = async (line: string) => JSON.parse((await run('bash', ['-c', asServed(line)], { env: { ...process.env, KEY: key } })).stdout);
  const ws = (await sh(lines[0])).data[0].id as string;
  const created = (await sh(lines[1].replace('ws_…', ws))).data;
  expect(created).toMatchObject({ name: 'Example', kind: 'http', status: 'pending' });
  expect((await sh(lines[2].replace('mon_…', created.id))).data).toMatchObject({ id: created.id, name: 'Example' });
});
