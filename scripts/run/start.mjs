// `npm start` (and `npm run worker`, with the argument `worker`): runs the
// compiled server (dist/src/main.js) or worker (dist/src/worker-main.js) in this process,
// building dist/ first when it is missing or older than the sources, so
// `npm install && npm start` works on a fresh checkout. The server runs in
// this very process (npm's `exec` replaces the shell): a supervisor's SIGTERM
// reaches it directly.
import { createRequire } from 'node:module';
import path from 'node:path';
import { ROOT, build, isStale } from './build.mjs';

if (isStale()) {
  process.stderr.write('Building dist/ (the sources are newer)…\n');
  build({ onlyStale: true });
}
const entry = process.argv[2] === 'worker' ? 'dist/src/worker-main.js' : 'dist/src/main.js';
createRequire(import.meta.url)(path.join(ROOT, entry));
