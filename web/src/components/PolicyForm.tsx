import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { api, ok, type Schema } from '../lib/api';
import { keys } from '../lib/queries';
import { changedFields, isEmpty } from '../lib/changes';
import { Field } from './Field';
import { FormError, reasonAt } from './FormError';
import { MonitorPicker } from './MonitorPicker';
import { StepRow, targetOptions, type StepDraft, type Targets } from './StepRow';

type Policy = Schema<'EscalationPolicy'>;
/** The fields this form shows a refusal at. */
const SHOWN = /^(name|repeat|steps|steps\.\d+\.(afterMinutes|targetType|targetId)|monitorIds(\.\d+)?)$/;

/** A policy's fields as the form sends them. */
const fieldsOf = (p: Pick<Policy, 'name' | 'repeat' | 'monitorIds'> & { steps: { afterMinutes: number; targetType: string; targetId: string }[] }) => ({
  name: p.name, repeat: p.repeat, monitorIds: p.monitorIds,
  steps: p.steps.map((s) => ({ afterMinutes: s.afterMinutes, targetType: s.targetType as StepDraft['targetType'], targetId: s.targetId })),
});

/**
 * Create an escalation policy, or change one in place (updateEscalationPolicy:
 * it keeps its id; only the fields changed are sent, so a member confined to
 * workspaces can rename it or change its monitors even when it does not see
 * every step — replacing the steps is then refused, in the server's words).
 */
export function PolicyForm({ existing, targets, monitors, confined }: {
  existing: Policy | null; targets: Targets; monitors: Schema<'Monitor'>[]; confined: boolean;
}) {
  const qc = useQueryClient();
  const navigate = useNavigate();
  // A new step pages a schedule's on-call person, or a person while there is no schedule.
  const firstType = targets.schedules.length ? 'schedule' : 'user';
  const first = (): StepDraft => ({ afterMinutes: '0', targetType: firstType, targetId: targetOptions(targets, firstType)[0]?.[0] ?? '' });
  const [name, setName] = useState(existing?.name ?? '');
  const [repeat, setRepeat] = useState(String(existing?.repeat ?? 0));
  const [monitorIds, setMonitorIds] = useState<string[]>(existing?.monitorIds ?? []);
  const [steps, setSteps] = useState<StepDraft[]>(existing
    ? existing.steps.map((s) => ({ afterMinutes: String(s.afterMinutes), targetType: s.targetType, targetId: s.targetId, gone: s.targetName ? undefined : `Gone (${s.targetId})` }))
    : [first()]);
  const save = useMutation({
    mutationFn: async () => {
      const fields = fieldsOf({ name, repeat: Number(repeat), monitorIds, steps: steps.map((s) => ({ ...s, afterMinutes: Number(s.afterMinutes) })) });
      if (!existing) return void await ok(api.POST('/on-call/escalation-policies', { body: fields }));
      const change = changedFields(fieldsOf(existing), fields);
      if (!isEmpty(change)) await ok(api.PATCH('/on-call/escalation-policies/{id}', { params: { path: { id: existing.id } }, body: change }));
    },
    onSuccess: () => navigate('/on-call'),
    onSettled: () => qc.invalidateQueries({ queryKey: keys.onCall }),
  });
  const e = save.error;
  const reason = (f: string) => reasonAt(e, f);
  const submit = (ev: FormEvent) => { ev.preventDefault(); save.mutate(); };
  const last = steps[steps.length - 1];
  return (
    <form onSubmit={submit} className="card editor">
      {existing && confined && <p className="notice small">You see the steps whose target is within your workspaces. Changing the steps of a policy that also pages beyond them is refused; its name, repeat and monitors can still be changed.</p>}
      <Field label="Name" error={reason('name')}>
        <input required maxLength={100} value={name} onChange={(x) => setName(x.target.value)} />
      </Field>
      <fieldset className="field">
        <legend>Steps</legend>
        <span className="hint">While an incident stays unacknowledged, each step notifies its target; in time order.</span>
        <ol className="plain steps">
          {steps.map((s, i) => (
            <StepRow key={i} n={i + 1} step={s} targets={targets} reason={reason}
              onChange={(x) => setSteps(steps.map((y, j) => (j === i ? x : y)))}
              onRemove={steps.length > 1 ? () => setSteps(steps.filter((_, j) => j !== i)) : null} />
          ))}
        </ol>
        {reason('steps') && <span className="error small">{reason('steps')}</span>}
        {steps.length < 20 && (
          <button type="button" className="secondary" onClick={() => setSteps([...steps, { ...first(), afterMinutes: String(Number(last?.afterMinutes ?? 0) + 15) }])}>Add a step</button>
        )}
      </fieldset>
      <Field label="Repeat the steps (times)" hint="0: once. Each round starts after the last step's minutes (at least 5)." error={reason('repeat')}>
        <input type="number" required min={0} max={10} value={repeat} onChange={(x) => setRepeat(x.target.value)} />
      </Field>
      <MonitorPicker monitors={monitors} selected={monitorIds} onChange={setMonitorIds}
        error={reason('monitorIds') ?? monitorIds.map((_, i) => reason(`monitorIds.${i}`)).find(Boolean) ?? null}
        hint={`Incidents of these monitors escalate. A monitor belongs to one policy: ticking it here moves it from another.${confined ? ' Name at least one.' : ''}`} />
      <FormError error={e} shownAt={(f) => SHOWN.test(f)} />
      <div className="row">
        <button type="submit" disabled={save.isPending}>{existing ? 'Save the policy' : 'Create the policy'}</button>
        <button type="button" className="secondary" onClick={() => navigate('/on-call')}>Cancel</button>
      </div>
    </form>
  );
}
