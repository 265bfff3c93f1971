import { VigilApiError } from '../lib/api';

/** A refused write in the server's words, unless one of the form's fields (`fields`) already shows it. */
export function FormError({ error, fields = [] }: { error: unknown; fields?: string[] }) {
  if (!error) return null;
  const e = error instanceof VigilApiError ? error : null;
  if (e && fields.some((f) => e.fieldReason(f) !== null)) return null;
  return <p role="alert" className="error">{e?.message ?? String(error)}</p>;
}
