import { VigilApiError } from '../lib/api';

/** The fields a refusal names (`details.fields`, else `details.field`); none for a refusal without details. */
export function refusedFields(e: unknown): string[] {
  if (!(e instanceof VigilApiError) || !e.details) return [];
  return e.details.fields.length ? e.details.fields.map((f) => f.field) : [e.details.field];
}

/** The server's reason for `field` of a refused write, for Field's `error`; null when it names another. */
export const reasonAt = (error: unknown, field: string) => (error instanceof VigilApiError ? error.fieldReason(field) : null);

/**
 * The server's reason for `field`, said in full: its whole sentence when the
 * refusal names only that field (it says more than the short reason, e.g.
 * how many tries are left), else the field's reason.
 */
export function fieldError(error: unknown, field: string): string | null {
  if (!(error instanceof VigilApiError) || !error.details) return null;
  const d = error.details;
  if (d.field === field && d.fields.length <= 1) return error.message;
  return error.fieldReason(field);
}

/** A failed write in words: the server's, or that it could not be reached. */
export function refusalText(error: unknown): string {
  if (error instanceof VigilApiError && error.code === 'network_error') return 'Vigil could not be reached. Check your connection and try again.';
  return error instanceof Error ? error.message : String(error);
}

/**
 * A refused write in the server's words, where it was made — never
 * swallowed. It stays out only when the form already shows the refusal at
 * its fields (`fields`, or `shownAt` for fields named by pattern such as
 * `steps.2.afterMinutes`): every field the refusal names is shown there, and
 * it is not a 403, whose sentence (who may do what) says more than any
 * field's reason.
 */
export function FormError({ error, fields = [], shownAt }: { error: unknown; fields?: string[]; shownAt?: (field: string) => boolean }) {
  if (!error) return null;
  const shown = shownAt ?? ((f: string) => fields.includes(f));
  const named = refusedFields(error);
  const forbidden = error instanceof VigilApiError && error.status === 403;
  if (!forbidden && named.length > 0 && named.every(shown)) return null;
  return <p role="alert" className="error">{refusalText(error)}</p>;
}
