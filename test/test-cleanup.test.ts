import fs from 'node:fs';
import path from 'node:path';
import { ROOT, execTracked, spawnTracked, tempDir } from './support/child';
import { groupMembers } from './support/procs';

// Tests clean up after themselves even when they fail or time out: a process
// a test started is stopped after it (SIGKILL to its group when SIGTERM is
// not enough), and whatever is left when the jest process exits, however it
// exits, is killed and its folders removed (test/support/child.ts).

let started: number;
test('a process a test leaves running…', () => {
  started = spawnTracked(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' }).pid!;
  expect(groupMembers(started)).not.toEqual([]);
});

test('…is stopped after that test', () => {
  expect(groupMembers(started)).toEqual([]);
});

test('a test that times out, and a test process that exits abruptly, leave no process and no folder behind', async () => {
  const reportFile = path.join(tempDir('vigil-cleanup-'), 'report.json');
  const jest = path.join(ROOT, 'node_modules/jest/bin/jest.js');
  const run = await execTracked(process.execPath, [jest, '--ci', '--runInBand', '--testMatch', '**/test/fixtures/cleanup/leaky.fixture.ts'], {
    // The run's PostgreSQL for its global setup: it must not start an embedded one that its abrupt exit would strand.
    cwd: ROOT, env: { ...process.env, LEAK_REPORT: reportFile, TEST_DATABASE_URL: process.env.VIGIL_TEST_ADMIN_URL }, timeoutMs: 120_000,
  }).then(() => ({ code: 0, stderr: '' }), (e: { code: number | null; stderr: string }) => e);
  // The fixture's second test ends its process with code 3 before jest can report.
  expect({ code: run.code, stderr: run.code === 3 ? '' : run.stderr }).toEqual({ code: 3, stderr: '' });
  const report = JSON.parse(fs.readFileSync(reportFile, 'utf8')) as { timedOut: number; afterTimeoutAlive: boolean; exited: number; dir: string };
  // The timed-out test's process (deaf to SIGTERM) was gone before the next test began.
  expect(report.afterTimeoutAlive).toBe(false);
  // The abrupt exit's process and folder went with the jest process.
  expect(groupMembers(report.exited)).toEqual([]);
  expect(groupMembers(report.timedOut)).toEqual([]);
  expect(fs.existsSync(report.dir)).toBe(false);
}, 180_000);
