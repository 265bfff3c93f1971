// `npm run build`: compiles src/ and gen/ to dist/ with tsc (tsconfig.build.json)
// and copies the files tsc does not emit (the generated validators, plain
// CommonJS); then type-checks the web app (web/) and builds it with Vite into
// dist/web, which Vigil serves at the base URL. Stamp files record each build,
// so `npm start` can tell whether either is older than its sources and
// rebuild only that one. Plain JavaScript: it runs before anything is
// compiled, without tsx.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
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

const WEB_DIST = path.join(DIST, 'web');
const WEB_STAMP = path.join(DIST, '.web-build-stamp');
/** What the web app is made from (the client package's types come from the contract). */
const WEB_SOURCES = ['web', 'clients/typescript/src', 'package.json'];

function staleAgainst(stampFile, sources, output) {
  const stamp = fs.statSync(stampFile, { throwIfNoEntry: false });
  if (!stamp || !fs.existsSync(output)) return true;
  return sources.some((s) => newestMtime(path.join(ROOT, s)) > stamp.mtimeMs);
}

/** True when the server's build (dist/) is missing or older than a source file. */
export function isServerStale() {
  return staleAgainst(STAMP, SOURCES, path.join(DIST, 'src/main.js'));
}

/** True when the web app's build (dist/web) is missing or older than a source file. */
export function isWebStale() {
  return staleAgainst(WEB_STAMP, WEB_SOURCES, path.join(WEB_DIST, 'index.html'));
}

/** True when either build is stale. */
export function isStale() {
  return isServerStale() || isWebStale();
}

/** The server: tsc to dist/. */
export function buildServer() {
  const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit' });
  fs.copyFileSync(path.join(ROOT, 'gen/validators.cjs'), path.join(DIST, 'gen/validators.cjs'));
  fs.writeFileSync(STAMP, `${new Date().toISOString()}\n`);
}

/** The web app: type-checked (Vite does not), then bundled by Vite into dist/web. */
export function buildWeb() {
  const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '--noEmit', '-p', path.join(ROOT, 'web/tsconfig.json')], { cwd: ROOT, stdio: 'inherit' });
  const vite = path.join(ROOT, 'node_modules/vite/bin/vite.js');
  // NODE_ENV from the caller (jest sets `test`) would make Vite bundle React's development build.
  execFileSync(process.execPath, [vite, 'build', '--config', path.join(ROOT, 'web/vite.config.mts'), '--logLevel', 'warn'], {
    cwd: ROOT, stdio: 'inherit', env: { ...process.env, NODE_ENV: 'production' },
  });
  // Each script and style sheet also gzipped once here, so the server sends the small one without compressing per request.
  const assets = path.join(WEB_DIST, 'assets');
  for (const name of fs.readdirSync(assets)) {
    if (/\.(js|css)$/.test(name)) fs.writeFileSync(path.join(assets, `${name}.gz`), zlib.gzipSync(fs.readFileSync(path.join(assets, name)), { level: 9 }));
  }
  fs.mkdirSync(DIST, { recursive: true });
  fs.writeFileSync(WEB_STAMP, `${new Date().toISOString()}\n`);
}

/** Builds both (`npm run build`), or with `onlyStale` only what is older than its sources (`npm start`). */
export function build({ onlyStale = false } = {}) {
  const started = Date.now();
  if (!onlyStale || isServerStale()) buildServer();
  if (!onlyStale || isWebStale()) buildWeb();
  return Date.now() - started;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // `--web-if-stale`: what the browser tests run (they start the server from src/, so only the app must be built).
  if (process.argv.includes('--web-if-stale')) {
    if (isWebStale()) buildWeb();
  } else {
    // `--if-stale`: only what is older than its sources.
    const ms = build({ onlyStale: process.argv.includes('--if-stale') });
    process.stdout.write(`built dist/ and dist/web in ${(ms / 1000).toFixed(1)} s\n`);
  }
}
