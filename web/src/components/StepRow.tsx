import type { Schema } from '../lib/api';
import { who, type Person } from '../lib/oncall';
import { Field } from './Field';

export type TargetType = Schema<'EscalationStepInput'>['targetType'];
export interface StepDraft { afterMinutes: string; targetType: TargetType; targetId: string; gone?: string }
export interface Targets { schedules: Schema<'Schedule'>[]; people: Person[]; channels: Schema<'Channel'>[] }

const TYPES: Array<[TargetType, string]> = [['schedule', "A schedule's on-call person"], ['user', 'A person'], ['channel', 'A channel']];

/** The choices for one target type, as [id, label]. */
export function targetOptions(t: Targets, type: TargetType): Array<[string, string]> {
  if (type === 'schedule') return t.schedules.map((s) => [s.id, s.name]);
  if (type === 'user') return t.people.map((p) => [p.userId, who(p)]);
  return t.channels.map((c) => [c.id, `${c.name} (${c.kind})`]);
}

/** One escalation step: after how many minutes, whom; the server's reasons at each field. */
export function StepRow({ n, step, targets, onChange, onRemove, reason }: {
  n: number; step: StepDraft; targets: Targets; onChange: (s: StepDraft) => void; onRemove: (() => void) | null;
  reason: (field: string) => string | null;
}) {
  const options = targetOptions(targets, step.targetType);
  const at = `steps.${n - 1}`;
  return (
    <li>
      <div className="row wrap-fields">
        <Field label={<><span className="visually-hidden">Step {n}: </span>After (minutes)</>} hint="Since the incident opened." error={reason(`${at}.afterMinutes`)}>
          <input type="number" required min={0} max={10080} value={step.afterMinutes} onChange={(e) => onChange({ ...step, afterMinutes: e.target.value })} />
        </Field>
        <Field label={<><span className="visually-hidden">Step {n}: </span>Notify</>} error={reason(`${at}.targetType`)}>
          <select value={step.targetType} onChange={(e) => {
            const targetType = e.target.value as TargetType;
            onChange({ afterMinutes: step.afterMinutes, targetType, targetId: targetOptions(targets, targetType)[0]?.[0] ?? '' });
          }}>
            {TYPES.map(([v, label]) => <option key={v} value={v}>{label}</option>)}
          </select>
        </Field>
        <Field label={<><span className="visually-hidden">Step {n}: </span>Who</>} error={reason(`${at}.targetId`)}>
          <select required value={step.targetId} onChange={(e) => onChange({ ...step, targetId: e.target.value, gone: undefined })}>
            {options.length === 0 && !step.gone && <option value="">None to choose</option>}
            {step.gone && <option value={step.targetId}>{step.gone}</option>}
            {options.map(([id, label]) => <option key={id} value={id}>{label}</option>)}
          </select>
        </Field>
      </div>
      {onRemove && <button type="button" className="secondary small" onClick={onRemove}>Remove step {n}</button>}
    </li>
  );
}
