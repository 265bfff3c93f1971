import type { Schema } from '../lib/api';
import { formatDateTime } from '../lib/format';

type Entry = Schema<'AuditEntry'>;

/** Who acted, in words: a person, a key and the person behind it, or Vigil itself. */
export function actorText(a: Entry['actor']): string {
  const person = a.user ? (a.user.name ? `${a.user.name} (${a.user.email})` : a.user.email) : null;
  if (a.type === 'api_key') return `API key ${a.name ?? a.id ?? '(deleted)'}${person ? ` of ${person}` : ''}`;
  if (a.type === 'user') return person ?? a.name ?? a.id ?? 'A person no longer known';
  return `Vigil${a.id ? ` (${a.id.replace(/_/g, ' ')})` : ''}`;
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

/** A recorded value, short: times in the person's zone, workspaces by name, text as is, the rest as JSON; null as a dash. */
function value(v: unknown, field: string, workspaceName: (id: string) => string): string {
  if (v === null || v === undefined) return '—';
  if (/^workspaceIds?$/.test(field)) return (Array.isArray(v) ? v : [v]).map((id) => workspaceName(String(id))).join(', ');
  if (typeof v === 'string') return v === '' ? '“”' : ISO_TIME.test(v) ? formatDateTime(v) : v;
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v.join(', ') || '(none)';
  return JSON.stringify(v);
}

/** One change: when, who, what, on which record, and each field from → to. */
export function AuditEntryRow({ entry: e, workspaceName }: { entry: Entry; workspaceName: (id: string) => string }) {
  const changes = Object.entries(e.changes) as Array<[string, unknown]>;
  return (
    <li>
      <div className="spread">
        <span><strong>{e.action}</strong> <span className="muted small">{e.resourceType}{e.resourceId ? ` ${e.resourceId}` : ' (organisation)'}{e.workspaceId ? ` · ${workspaceName(e.workspaceId)}` : ''}</span></span>
        <time className="small" dateTime={e.at}>{formatDateTime(e.at)}</time>
      </div>
      <p className="small audit-actor">By {actorText(e.actor)}</p>
      {changes.length > 0 && (
        <ul className="changes small">
          {changes.map(([field, c]) => {
            const fromTo = c && typeof c === 'object' && ('from' in c || 'to' in c) ? (c as { from?: unknown; to?: unknown }) : null;
            return (
              <li key={field}>
                <code>{field}</code>: {fromTo ? <>{value(fromTo.from, field, workspaceName)} → {value(fromTo.to, field, workspaceName)}</>
                  : c && typeof c === 'object' && 'changed' in c ? 'changed (its values are never recorded)' : value(c, field, workspaceName)}
              </li>
            );
          })}
        </ul>
      )}
    </li>
  );
}
