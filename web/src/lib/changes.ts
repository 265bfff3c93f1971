/**
 * What an edit sends: the fields of `after` that differ from `before`
 * (compared as JSON, so lists and nested steps count as changed when any
 * item is). The contract's PATCH operations keep the fields not given, and
 * refuse an empty change; a form compares the values it loaded with the
 * values it would save, so only what the person changed is sent.
 */
export function changedFields<T extends object>(before: T, after: T): Partial<T> {
  const out: Partial<T> = {};
  for (const k of Object.keys(after) as (keyof T)[]) {
    if (JSON.stringify(before[k]) !== JSON.stringify(after[k])) out[k] = after[k];
  }
  return out;
}

/** True when a change has nothing in it (a PATCH of it would be refused, and there is nothing to save). */
export const isEmpty = (change: object) => Object.keys(change).length === 0;
