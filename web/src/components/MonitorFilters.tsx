import { useMemo } from 'react';
import type { Schema } from '../lib/api';
import { Field } from './Field';

type Monitor = Schema<'Monitor'>;
export interface Filters { search: string; status: string; kind: string; tag: string; workspace: string }

export const KINDS = ['http', 'heartbeat', 'tcp', 'dns', 'tls_audit', 'mail_posture', 'snmp', 'agent'] as const;
export const KIND_LABELS: Record<string, string> = {
  http: 'HTTP', heartbeat: 'Heartbeat', tcp: 'TCP port', dns: 'DNS', tls_audit: 'TLS audit', mail_posture: 'Mail posture', snmp: 'SNMP', agent: 'Server agent',
};
const STATUSES = ['up', 'down', 'degraded', 'paused', 'pending'];

/** The monitors that pass every filter (all on the list already read: no read per keystroke). */
export function filterMonitors(monitors: Monitor[], f: Filters): Monitor[] {
  const needle = f.search.trim().toLowerCase();
  return monitors.filter((m) => (!f.status || m.status === f.status) && (!f.kind || m.kind === f.kind)
    && (!f.tag || m.tags.includes(f.tag)) && (!f.workspace || m.workspace.id === f.workspace)
    && (!needle || m.name.toLowerCase().includes(needle)));
}

export function MonitorFilters({ monitors, filters, onChange }: { monitors: Monitor[]; filters: Filters; onChange: (name: keyof Filters, value: string) => void }) {
  const { tags, workspaces } = useMemo(() => {
    const t = new Set<string>();
    const w = new Map<string, string>();
    for (const m of monitors) { for (const x of m.tags) t.add(x); w.set(m.workspace.id, m.workspace.name); }
    return { tags: [...t].sort(), workspaces: [...w.entries()].sort((a, b) => a[1].localeCompare(b[1])) };
  }, [monitors]);
  return (
    <div className="filters" role="search">
      <Field label="Search by name">
        <input type="search" value={filters.search} onChange={(e) => onChange('search', e.target.value)} />
      </Field>
      <Field label="Status">
        <select value={filters.status} onChange={(e) => onChange('status', e.target.value)}>
          <option value="">Any</option>
          {STATUSES.map((s) => <option key={s} value={s}>{s}</option>)}
        </select>
      </Field>
      <Field label="Kind">
        <select value={filters.kind} onChange={(e) => onChange('kind', e.target.value)}>
          <option value="">Any</option>
          {KINDS.map((k) => <option key={k} value={k}>{KIND_LABELS[k]}</option>)}
        </select>
      </Field>
      <Field label="Tag">
        <select value={filters.tag} onChange={(e) => onChange('tag', e.target.value)}>
          <option value="">Any</option>
          {tags.map((t) => <option key={t} value={t}>{t}</option>)}
        </select>
      </Field>
      <Field label="Workspace">
        <select value={filters.workspace} onChange={(e) => onChange('workspace', e.target.value)}>
          <option value="">Any</option>
          {workspaces.map(([id, name]) => <option key={id} value={id}>{name}</option>)}
        </select>
      </Field>
    </div>
  );
}
