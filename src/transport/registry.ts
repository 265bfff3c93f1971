import fs from 'node:fs';
import path from 'node:path';
import { createRegistry, type DescMessage, type DescService, type Registry } from '@bufbuild/protobuf';
import type { GenFile } from '@bufbuild/protobuf/codegenv2';

const GEN_DIR = path.resolve(__dirname, '../../gen/proto/vigil/v1');

let registry: Registry | undefined;

/** Every generated proto file of vigil.v1, loaded once. */
export function protoRegistry(): Registry {
  if (registry) return registry;
  const files: GenFile[] = [];
  for (const name of fs.readdirSync(GEN_DIR).sort()) {
    if (!/_pb\.(ts|js)$/.test(name)) continue;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const mod = require(path.join(GEN_DIR, name.replace(/\.(ts|js)$/, ''))) as Record<string, unknown>;
    const file = Object.entries(mod).find(([k]) => k.startsWith('file_'))?.[1] as GenFile | undefined;
    if (file) files.push(file);
  }
  registry = createRegistry(...files);
  return registry;
}

/** The message `typeName` (e.g. `vigil.v1.Monitor`); throws if the contract lacks it. */
export function messageDesc(typeName: string): DescMessage {
  const m = protoRegistry().getMessage(typeName);
  if (!m) throw new Error(`no proto message ${typeName}`);
  return m;
}

/** The service `vigil.v1.<name>`. */
export function serviceDesc(name: string): DescService {
  const s = protoRegistry().getService(`vigil.v1.${name}`);
  if (!s) throw new Error(`no proto service ${name}`);
  return s;
}
