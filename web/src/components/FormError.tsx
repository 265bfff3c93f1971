import { VigilApiError } from '../lib/api';

/** The fields a refusal names (`details.fields`, else `details.field`); none for a refusal without details. */
export function refusedFields(e: unknown): string[] {
  if (!(e instanceof VigilApiError) || !e.details) return [];
  return e.details.fields.length ? e.details.fields.map((f) => f.field) : [e.details.field];
}

/**
 * A refused write in the server's words, unless the form already shows it at
 * one of its fields (`fields`, or `shownAt` for fields named by pattern such
 * as `steps.2.afterMinutes`): never swallowed.
 */
export function FormError({ error, fields = [], shownAt }: { error: unknown; fields?: string[]; shownAt?: (field: string) => boolean }) {
  if (!error) return null;
  const shown = shownAt ?? ((f: string) => fields.includes(f));
  if (refusedFields(error).some(shown)) return null;
  return <p role="alert" className="error">{error instanceof Error ? error.message : String(error)}</p>;
}
