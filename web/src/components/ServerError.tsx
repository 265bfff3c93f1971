import { VigilApiError } from '../lib/api';

/**
 * The server's reason for `field` when a write was refused there: its whole
 * sentence when the refusal names only that field (it says more than the
 * short reason, e.g. how many tries are left), else the field's reason.
 */
export function fieldError(error: unknown, field: string): string | null {
  if (!(error instanceof VigilApiError) || !error.details) return null;
  const d = error.details;
  if (d.field === field && d.fields.length <= 1) return error.message;
  return error.fieldReason(field);
}

/**
 * A refused write in the server's words, where it was made — unless the
 * refusal names one of `fields`, which show it themselves (see fieldError).
 */
export function ServerError({ error, fields = [] }: { error: unknown; fields?: string[] }) {
  if (!error) return null;
  if (error instanceof VigilApiError && error.details && fields.includes(error.details.field)) return null;
  const text = error instanceof VigilApiError
    ? (error.code === 'network_error' ? 'Vigil could not be reached. Check your connection and try again.' : error.message)
    : String(error);
  return <p role="alert" className="error">{text}</p>;
}
