import { useMemo, type FormEvent } from 'react';
import { useQuery } from '@tanstack/react-query';
import type { Schema } from '../lib/api';
import { qp } from '../lib/queries-people';
import { qs, type AuditFilters as ServerFilters } from '../lib/queries-settings';
import { useMe } from '../lib/me';
import { Field } from './Field';
import { actorText } from './AuditEntryRow';

type Entry = Schema<'AuditEntry'>;

/** The filters as the address keeps them (days, not instants, so a link reads the same in every time zone's terms). */
export const AUDIT_FILTERS = ['actor', 'action', 'resourceType', 'resourceId', 'from', 'to'] as const;
export type AuditAddress = Record<(typeof AUDIT_FILTERS)[number], string>;

/** Start of a day (YYYY-MM-DD) in the person's time zone, as an instant. */
function dayStart(day: string, plusDays = 0): string | undefined {
  const [y, m, d] = day.split('-').map(Number);
  const t = new Date(y, m - 1, d + plusDays);
  return Number.isNaN(t.getTime()) ? undefined : t.toISOString();
}

/** The address's filters as the server takes them: `from` the start of its day, `to` the end of its day (the next day's start, exclusive). */
export function serverFilters(f: AuditAddress): ServerFilters {
  const out: ServerFilters = {};
  for (const k of ['actor', 'action', 'resourceType', 'resourceId'] as const) if (f[k]) out[k] = f[k];
  if (f.from) out.from = dayStart(f.from);
  if (f.to) out.to = dayStart(f.to, 1);
  return out;
}

/** The control of the parameter a refusal names (the form's names are the parameters'); undefined for any other. */
export const fieldOf = (param: string | undefined) => (AUDIT_FILTERS as readonly string[]).includes(param ?? '') ? param as keyof AuditAddress : undefined;

/**
 * The filter form: nothing is read until it is applied (Enter or the button),
 * so each change costs one read of the log. Who lists the organisation's
 * people and keys (when the caller may read them) and the actors of the
 * entries shown; a person means their own changes and their keys'.
 */
export function AuditFilterForm({ applied, entries, onApply, error }: {
  applied: AuditAddress;
  entries: Entry[];
  onApply: (f: AuditAddress) => void;
  error: { field: keyof AuditAddress; reason: string } | null;
}) {
  const { can } = useMe();
  // The Members page's read (same key, same shape): q.members() shares its key with another shape.
  const members = useQuery({ ...qp.members(), enabled: can('member:read') });
  const keys = useQuery({ ...qs.apiKeys(), enabled: can('api_key:read') });
  const who = useMemo(() => {
    const people = new Map<string, string>();
    const apiKeys = new Map<string, string>();
    for (const m of members.data?.members ?? []) people.set(m.userId, m.name ? `${m.name} (${m.email})` : m.email);
    for (const k of keys.data ?? []) apiKeys.set(k.id, `API key ${k.name} of ${k.owner.email}`);
    for (const e of entries) {
      if (e.actor.user && !people.has(e.actor.user.id)) people.set(e.actor.user.id, e.actor.user.name ? `${e.actor.user.name} (${e.actor.user.email})` : e.actor.user.email);
      if (e.actor.type !== 'user' && e.actor.id && !apiKeys.has(e.actor.id)) apiKeys.set(e.actor.id, actorText(e.actor));
    }
    // A link may name someone no list holds any more: keep the id visible rather than drop the filter.
    if (applied.actor && !people.has(applied.actor) && !apiKeys.has(applied.actor)) apiKeys.set(applied.actor, applied.actor);
    const sorted = (m: Map<string, string>) => [...m].sort((a, b) => a[1].localeCompare(b[1]));
    return { people: sorted(people), keys: sorted(apiKeys) };
  }, [members.data, keys.data, entries, applied.actor]);
  const suggestions = useMemo(() => ({
    actions: [...new Set([...entries.map((e) => e.action), ...(applied.action ? [applied.action] : [])])].sort(),
    types: [...new Set(entries.map((e) => e.resourceType))].sort(),
  }), [entries, applied.action]);
  const err = (k: keyof AuditAddress) => (error?.field === k ? error.reason : null);

  const submit = (ev: FormEvent<HTMLFormElement>) => {
    ev.preventDefault();
    const data = new FormData(ev.currentTarget);
    // Comma lists as the server reads them (`a, b` is `a,b`), so the address holds one spelling of a filter.
    const value = (k: string) => String(data.get(k) ?? '').split(',').map((s) => s.trim()).join(',');
    onApply(Object.fromEntries(AUDIT_FILTERS.map((k) => [k, k === 'resourceId' ? String(data.get(k) ?? '').trim() : value(k)])) as AuditAddress);
  };
  const filtered = AUDIT_FILTERS.some((k) => applied[k]);
  return (
    // Keyed by the applied filters, so going back in history shows what is applied, not a stale draft.
    <form key={JSON.stringify(applied)} className="filters" onSubmit={submit} aria-label="Filter the audit log">
      <Field label="Who" error={err('actor')}>
        <select name="actor" defaultValue={applied.actor}>
          <option value="">Anyone</option>
          {who.people.length > 0 && <optgroup label="People (their changes and their keys')">{who.people.map(([id, label]) => <option key={id} value={id}>{label}</option>)}</optgroup>}
          {who.keys.length > 0 && <optgroup label="API keys and Vigil">{who.keys.map(([id, label]) => <option key={id} value={id}>{label}</option>)}</optgroup>}
        </select>
      </Field>
      <Field label="Action" hint="Exact, e.g. monitor.created; several with commas" error={err('action')}>
        <input name="action" list="audit-actions" defaultValue={applied.action} autoComplete="off" spellCheck={false} />
      </Field>
      <datalist id="audit-actions">{suggestions.actions.map((a) => <option key={a} value={a} />)}</datalist>
      <Field label="Record type" hint="e.g. monitor, api_key" error={err('resourceType')}>
        <input name="resourceType" list="audit-types" defaultValue={applied.resourceType} autoComplete="off" spellCheck={false} />
      </Field>
      <datalist id="audit-types">{suggestions.types.map((a) => <option key={a} value={a} />)}</datalist>
      <Field label="Record id" error={err('resourceId')}>
        <input name="resourceId" defaultValue={applied.resourceId} autoComplete="off" spellCheck={false} />
      </Field>
      <Field label="From (day)" error={err('from')}><input type="date" name="from" defaultValue={applied.from} /></Field>
      <Field label="To (day, included)" error={err('to')}><input type="date" name="to" defaultValue={applied.to} /></Field>
      <button type="submit">Apply the filters</button>
      {filtered && <button type="button" className="secondary" onClick={() => onApply(Object.fromEntries(AUDIT_FILTERS.map((k) => [k, ''])) as AuditAddress)}>Clear the filters</button>}
    </form>
  );
}
