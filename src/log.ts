import pino from 'pino';
import type { Config } from './config';

/** Structured fields of one log line. */
export type Fields = Record<string, unknown>;

/**
 * Vigil's logger: JSON lines on stderr (pino), pretty on a terminal. Callers
 * pass ids and figures as fields; secrets never reach it, and the redaction
 * below is the second line of defence should one slip into a field.
 */
export interface Logger {
  debug(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, err?: unknown, fields?: Fields): void;
  /** Whether a line at `level` would be written (to skip building fields nobody reads). */
  enabled(level: 'debug' | 'info'): boolean;
  /** A logger whose lines all carry `bindings` (a component, a monitor id). */
  child(bindings: Fields): Logger;
}

/**
 * Field paths censored wherever they appear (one level deep, and under the
 * usual containers): credentials, tokens, passwords, channel targets.
 */
export const REDACTED_PATHS = [
  'authorization', 'cookie', 'password', 'token', 'secret', 'apiKey', 'target', 'masterKey', 'databaseUrl', 'url',
  '*.authorization', '*.cookie', '*.password', '*.token', '*.secret', '*.apiKey', '*.target', '*.masterKey', '*.databaseUrl',
  'headers["set-cookie"]', '*.headers.authorization', '*.headers.cookie', '*.headers["set-cookie"]', '*.headers["x-sentry-auth"]',
  'err.config', 'err.request', 'err.response',
];

export interface LoggerOptions {
  format?: Config['logFormat'];
  /** Where lines go (tests); default stderr. */
  destination?: pino.DestinationStream;
}

function wrap(p: pino.Logger): Logger {
  return {
    debug: (msg, fields) => p.debug(fields ?? {}, msg),
    info: (msg, fields) => p.info(fields ?? {}, msg),
    warn: (msg, fields) => p.warn(fields ?? {}, msg),
    error: (msg, err, fields) => p.error({ ...fields, ...(err === undefined ? {} : { err: err instanceof Error ? err : new Error(String(err)) }) }, msg),
    enabled: (level) => p.isLevelEnabled(level),
    child: (bindings) => wrap(p.child(bindings)),
  };
}

/** A logger at `level`: JSON, or pretty when asked or on a terminal. */
export function createLogger(level: Config['logLevel'], o: LoggerOptions = {}): Logger {
  const pretty = o.format === 'pretty' || (o.format == null && !o.destination && process.stderr.isTTY);
  const options: pino.LoggerOptions = {
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  if (o.destination) return wrap(pino(options, o.destination));
  if (pretty) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const prettyStream = require('pino-pretty') as (o: Record<string, unknown>) => pino.DestinationStream;
    return wrap(pino(options, prettyStream({ destination: 2, sync: true, colorize: process.stderr.isTTY, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid' })));
  }
  // Synchronous writes: a line written before a crash or an exit is never lost.
  return wrap(pino(options, pino.destination({ fd: 2, sync: true })));
}
