import { useEffect, useRef, useState } from 'react';

/**
 * An action asked twice, in place (no browser dialog): the first press says
 * what will happen, the second does it; Cancel or Escape steps back. Focus
 * moves to the question's answer and back to the button, so it works from
 * the keyboard. When `onConfirm` returns a promise, the question closes once
 * it succeeds (the record stays on screen, e.g. a replaced feed); a failure
 * leaves it open beside the caller's error.
 */
export function ConfirmButton({ label, name, question, confirmLabel, pending, onConfirm, danger = true }: {
  label: string; name: string; question: string; confirmLabel: string; pending?: boolean; onConfirm: () => unknown;
  /** False for a step back that loses nothing (the opener is then a secondary button). */
  danger?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const yes = useRef<HTMLButtonElement>(null);
  const opener = useRef<HTMLButtonElement>(null);
  const back = useRef(false);
  useEffect(() => {
    if (asking) yes.current?.focus();
    else if (back.current) { back.current = false; opener.current?.focus(); }
  }, [asking]);
  const cancel = () => { back.current = true; setAsking(false); };
  const confirm = () => {
    const done = onConfirm();
    if (done instanceof Promise) done.then(() => setAsking(false), () => undefined);
  };
  if (!asking) {
    return <button ref={opener} type="button" className={danger ? 'danger' : 'secondary'} aria-label={name} onClick={() => setAsking(true)}>{label}</button>;
  }
  return (
    <span role="group" aria-label={name} className="row confirm" onKeyDown={(e) => { if (e.key === 'Escape') cancel(); }}>
      <span>{question}</span>
      <button ref={yes} type="button" className="danger" disabled={pending} onClick={confirm}>{confirmLabel}</button>
      <button type="button" className="secondary" onClick={cancel}>Cancel</button>
    </span>
  );
}
