import { Field } from './Field';
import { CopyButton } from './CopyButton';

/** A read-only value to copy (a URL that is itself the credential), with its button and a "Copied." note. */
export function CopyField({ label, value, hint }: { label: string; value: string; hint?: string }) {
  return (
    <div className="row copy">
      <Field label={label} hint={hint}>
        <input readOnly value={value} size={48} onFocus={(e) => e.target.select()} />
      </Field>
      <CopyButton text={value} label={`Copy the ${label}`} shown="Copy" />
    </div>
  );
}
