import { useEffect, useRef, useState } from 'react';

/**
 * A destructive action asked twice: the first press says what will happen,
 * the second does it; Cancel or Escape steps back. Focus moves to the
 * question's answer and back to the button, so it works from the keyboard.
 */
export function ConfirmButton({ label, name, question, confirmLabel, pending, onConfirm }: {
  label: string; name: string; question: string; confirmLabel: string; pending?: boolean; onConfirm: () => void;
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
  if (!asking) return <button ref={opener} type="button" className="danger" aria-label={name} onClick={() => setAsking(true)}>{label}</button>;
  return (
    <span role="group" aria-label={name} className="row confirm" onKeyDown={(e) => { if (e.key === 'Escape') cancel(); }}>
      <span>{question}</span>
      <button ref={yes} type="button" className="danger" disabled={pending} onClick={onConfirm}>{confirmLabel}</button>
      <button type="button" className="secondary" onClick={cancel}>Cancel</button>
    </span>
  );
}
