import { parseArgs } from 'node:util';
import { loadConfig } from '../config';
import { connectDb, ensureDatabase } from '../db/connect';
import { runningEmbeddedUrl, startEmbedded, type EmbeddedServer } from '../db/embedded';
import { migrateToLatest } from '../db/migrate';
import { addMember, createOrganization, OperatorError, setPassword } from '../domain/organizations';
import { createProbe, revokeProbe } from '../domain/probes';

const USAGE = `Usage:
  npm run cli -- org create --name NAME --owner-email EMAIL [--plan free|pro|business|enterprise]
  npm run cli -- member add --org ORG_ID --email EMAIL --role owner|admin|member|viewer [--workspace WS_ID ...]
  npm run cli -- user password --email EMAIL --password PASSWORD   (sets a person's sign-in password)
  npm run cli -- probe create --org ORG_ID --name NAME     (prints the probe token once)
  npm run cli -- probe revoke --probe PROBE_ID
Prints JSON. Uses DATABASE_URL, else the embedded database of a running server, else starts it.`;

async function withDb<T>(fn: (db: ReturnType<typeof connectDb>['db']) => Promise<T>): Promise<T> {
  const config = loadConfig();
  let embedded: EmbeddedServer | null = null;
  let url = config.databaseUrl ?? runningEmbeddedUrl(config.dataDir);
  if (!url) {
    embedded = await startEmbedded(config.dataDir);
    await ensureDatabase(embedded.url('postgres'), 'vigil');
    url = embedded.url('vigil');
  }
  const { db } = connectDb(url, 2);
  try {
    await migrateToLatest(db);
    return await fn(db);
  } finally {
    await db.destroy();
    await embedded?.stop();
  }
}

/** Runs one CLI command; returns the process exit code. */
export async function runCli(argv: string[]): Promise<number> {
  const [area, verb, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: 'string' }, 'owner-email': { type: 'string' }, plan: { type: 'string' },
      org: { type: 'string' }, email: { type: 'string' }, role: { type: 'string' }, workspace: { type: 'string', multiple: true }, probe: { type: 'string' }, password: { type: 'string' },
    },
    strict: true,
  });
  let result: unknown;
  if (area === 'org' && verb === 'create') {
    if (!values.name || !values['owner-email']) throw new OperatorError('org create needs --name and --owner-email');
    result = await withDb((db) => createOrganization(db, { name: values.name!, ownerEmail: values['owner-email']!, plan: values.plan }));
  } else if (area === 'member' && verb === 'add') {
    if (!values.org || !values.email || !values.role) throw new OperatorError('member add needs --org, --email and --role');
    result = await withDb((db) => addMember(db, { organizationId: values.org!, email: values.email!, role: values.role!, workspaceIds: values.workspace ?? null }));
  } else if (area === 'user' && verb === 'password') {
    if (!values.email || !values.password) throw new OperatorError('user password needs --email and --password');
    result = await withDb((db) => setPassword(db, values.email!, values.password!));
  } else if (area === 'probe' && verb === 'create') {
    if (!values.org || !values.name) throw new OperatorError('probe create needs --org and --name');
    result = await withDb((db) => createProbe(db, values.org!, values.name!));
  } else if (area === 'probe' && verb === 'revoke') {
    if (!values.probe) throw new OperatorError('probe revoke needs --probe');
    result = await withDb((db) => revokeProbe(db, values.probe!));
  } else {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  return 0;
}

if (require.main === module) {
  runCli(process.argv.slice(2)).then((code) => process.exit(code), (e) => {
    process.stderr.write(`${JSON.stringify({ error: e instanceof Error ? e.message : String(e) })}\n`);
    process.exit(e instanceof OperatorError || (e as { code?: string })?.code?.startsWith('ERR_PARSE_ARGS') ? 2 : 1);
  });
}
