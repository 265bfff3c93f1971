import { refusedFields } from '../lib/oncall';

/**
 * A refused write in the server's words, unless the form already shows it at
 * a field (`shownAt` says which fields it shows): never swallowed.
 */
export function FormError({ error, shownAt }: { error: unknown; shownAt: (field: string) => boolean }) {
  if (!error) return null;
  if (refusedFields(error).some(shownAt)) return null;
  return <p role="alert" className="error">{error instanceof Error ? error.message : String(error)}</p>;
}
