/** A page still loading: announced to screen readers, never an endless blank. */
export function Loading({ label }: { label: string }) {
  return <p role="status" className="muted pad">{label}…</p>;
}
