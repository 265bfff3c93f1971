import { useId, type ReactElement, type ReactNode, cloneElement } from 'react';

/** A labelled control with its hint and the server's reason when it refused the value. */
export function Field({ label, hint, error, children }: { label: ReactNode; hint?: string; error?: string | null; children: ReactElement<Record<string, unknown>> }) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [hint ? hintId : null, error ? errorId : null].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {cloneElement(children, { id, 'aria-describedby': describedBy, 'aria-invalid': error ? true : undefined })}
      {hint && <span id={hintId} className="hint">{hint}</span>}
      {error && <span id={errorId} className="error small">{error}</span>}
    </div>
  );
}
