import type { KindField } from '../lib/kindFields';
import { Field } from './Field';

/** One config field of a monitor kind, drawn by its type. */
export function KindFieldInput({ field: f, value, required, error, onChange }: {
  field: KindField; value: string | boolean | undefined; required: boolean; error?: string; onChange: (v: string | boolean) => void;
}) {
  const text = typeof value === 'string' ? value : '';
  let control;
  if (f.type === 'checkbox') {
    control = <input type="checkbox" checked={value !== false} onChange={(e) => onChange(e.target.checked)} />;
  } else if (f.type === 'select') {
    control = (
      <select value={text} onChange={(e) => onChange(e.target.value)}>
        {(f.options ?? []).map((o) => <option key={o} value={o}>{o || 'Default'}</option>)}
      </select>
    );
  } else if (f.type === 'list' || f.type === 'json') {
    control = <textarea value={text} required={required} onChange={(e) => onChange(e.target.value)} />;
  } else {
    control = <input type={f.type === 'number' ? 'number' : f.type === 'password' ? 'password' : 'text'} autoComplete="off" required={required} value={text} onChange={(e) => onChange(e.target.value)} />;
  }
  return <Field label={f.label} hint={f.hint} error={error}>{control}</Field>;
}
