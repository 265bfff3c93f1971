import fs from 'node:fs';
import type { Config } from '../config';
import type { NetPolicy } from './net';

/** The checks' network policy from the configuration (extra CA files read once). */
export function netPolicyFrom(config: Config): NetPolicy {
  return {
    allowPrivate: config.checksAllowPrivate,
    extraCa: config.checksExtraCaFiles.map((f) => fs.readFileSync(f, 'utf8')),
  };
}
