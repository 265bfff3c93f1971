import { VigilApiError } from '../lib/api';

/**
 * A refused write in the server's words, where it was made. A 400 whose
 * every field is shown at its field (`shownFields`, with `fieldReason`) needs
 * no banner; anything else — a refusal (403, 409, 402, 502), a field the
 * form does not show, the network — is said here, as the server wrote it.
 */
export function ServerRefusal({ error, shownFields = [] }: { error: unknown; shownFields?: string[] }) {
  if (!error) return null;
  const e = error instanceof VigilApiError ? error : null;
  const fields = e?.details?.fields.map((f) => f.field) ?? [];
  if (e && e.status === 400 && fields.length > 0 && fields.every((f) => shownFields.includes(f))) return null;
  return <p role="alert" className="error">{e ? e.message : String(error)}</p>;
}

/** The server's reason for `field` of a refused write, for Field's `error`. */
export const reasonAt = (error: unknown, field: string) => (error instanceof VigilApiError ? error.fieldReason(field) : null);
