import { responseValidators } from '../../gen/validators.cjs';
import type { ApiResponse } from './harness';

/**
 * Asserts a success status and that the body matches the contract's response
 * schema for `op`; returns `data`.
 */
export function ok(op: string, res: ApiResponse, status = 200) {
  expect({ op, status: res.status, body: res.status === status ? 'ok' : res.body }).toEqual({ op, status, body: 'ok' });
  const v = responseValidators[op];
  const valid = v(res.body);
  expect({ op, errors: valid ? null : v.errors }).toEqual({ op, errors: null });
  return res.body.data;
}

/** Polls `fn` until it returns something truthy (every 100 ms, up to `ms`). */
export async function until<T>(what: string, fn: () => Promise<T | undefined | null | false>, ms = 15000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
