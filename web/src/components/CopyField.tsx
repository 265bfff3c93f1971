import { useState } from 'react';
import { Field } from './Field';

/** A read-only value to copy (a URL that is itself the credential), with its button and a "Copied." note. */
export function CopyField({ label, value, hint }: { label: string; value: string; hint?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="row copy">
      <Field label={label} hint={hint}>
        <input readOnly value={value} size={48} onFocus={(e) => e.target.select()} />
      </Field>
      <button type="button" className="secondary" aria-label={`Copy the ${label}`}
        onClick={() => { void navigator.clipboard.writeText(value).then(() => setCopied(true)); }}>Copy</button>
      <span role="status" className="small">{copied ? 'Copied.' : ''}</span>
    </div>
  );
}
