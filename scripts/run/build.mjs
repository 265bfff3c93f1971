// `npm run build`: compiles src/ and gen/ to dist/ with tsc (tsconfig.build.json)
// and copies the files tsc does not emit (the generated validators, plain
// CommonJS). A stamp file records the build, so `npm start` can tell whether
// dist/ is older than the sources. Plain JavaScript: it runs before anything
// is compiled, without tsx.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DIST = path.join(ROOT, 'dist');
export const STAMP = path.join(DIST, '.build-stamp');
/** What a build is made from: a change to any of these makes dist/ stale. */
const SOURCES = ['src', 'gen', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];

function newestMtime(p) {
  const st = fs.statSync(p, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const name of fs.readdirSync(p)) newest = Math.max(newest, newestMtime(path.join(p, name)));
  return newest;
}

/** True when dist/ is missing or older than a source file. */
export function isStale() {
  const stamp = fs.statSync(STAMP, { throwIfNoEntry: false });
  if (!stamp || !fs.existsSync(path.join(DIST, 'src/main.js'))) return true;
  return SOURCES.some((s) => newestMtime(path.join(ROOT, s)) > stamp.mtimeMs);
}

export function build() {
  const started = Date.now();
  const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit' });
  fs.copyFileSync(path.join(ROOT, 'gen/validators.cjs'), path.join(DIST, 'gen/validators.cjs'));
  fs.writeFileSync(STAMP, `${new Date().toISOString()}\n`);
  return Date.now() - started;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const ms = build();
  process.stdout.write(`built dist/ in ${(ms / 1000).toFixed(1)} s\n`);
}
