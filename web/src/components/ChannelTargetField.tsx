import { channelKind } from '../lib/channelKinds';
import { Field } from './Field';

/**
 * A channel's target, labelled by what the kind takes (an address, a URL, a
 * key), with the server's reason when it refused it. Shared by the create
 * and edit forms; `required` is false where empty means "keep it".
 */
export function ChannelTargetField({ kind, value, onChange, error, hint, required = true }: {
  kind: string; value: string; onChange: (v: string) => void; error: string | null; hint?: string; required?: boolean;
}) {
  return (
    <Field label={channelKind(kind)?.target ?? 'Target'} hint={hint} error={error}>
      <input required={required} maxLength={2000} autoComplete="off" spellCheck={false} value={value} onChange={(x) => onChange(x.target.value)} />
    </Field>
  );
}
