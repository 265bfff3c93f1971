import fs from 'node:fs';
import path from 'node:path';

/**
 * The project root (the folder of package.json), whether this code runs as
 * TypeScript from `src/` or compiled from `dist/src/`: the contract files
 * (`gen/openapi.json`, `proto/`) are read from there.
 */
function findRoot(): string {
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${__dirname}`);
    dir = up;
  }
  return dir;
}

export const ROOT = findRoot();
