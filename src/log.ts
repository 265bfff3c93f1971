import type { Config } from './config';

const ORDER = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;

/** A minimal leveled logger writing to stderr; it never receives tokens or secrets. */
export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string, err?: unknown): void;
}

/** A logger at `level`. */
export function createLogger(level: Config['logLevel']): Logger {
  const at = ORDER[level];
  const write = (lvl: keyof typeof ORDER, msg: string) => {
    if (ORDER[lvl] >= at) process.stderr.write(`${new Date().toISOString()} ${lvl} ${msg}\n`);
  };
  return {
    info: (m) => write('info', m),
    warn: (m) => write('warn', m),
    error: (m, e) => write('error', e instanceof Error ? `${m}: ${e.stack ?? e.message}` : e === undefined ? m : `${m}: ${String(e)}`),
  };
}
