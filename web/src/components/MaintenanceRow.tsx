import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, ok, type Schema } from '../lib/api';
import { keys } from '../lib/queries';
import { useMe } from '../lib/me';
import { formatDateTime } from '../lib/format';
import { RecurrenceText } from './RecurrenceText';
import { ConfirmButton } from './ConfirmButton';
import { FormError } from './FormError';

type Window = Schema<'MaintenanceWindow'>;

/**
 * One window: its rule in words, monitors, what happens to checks, the
 * occurrence in progress or next; edit and delete for those who may. A window
 * in progress ends at once when deleted (the contract's only way to end one).
 */
export function MaintenanceRow({ window: m }: { window: Window }) {
  const { can } = useMe();
  const qc = useQueryClient();
  const remove = useMutation({
    mutationFn: () => ok(api.DELETE('/maintenance', { params: { query: { id: m.id } } })),
    onSuccess: () => qc.setQueryData<Window[]>(keys.maintenance, (list) => list?.filter((x) => x.id !== m.id)),
  });
  const ending = m.active && !m.recurrenceRule;
  const confirmText = ending
    ? `End “${m.title}” now? Alerting resumes at once and the window is removed.`
    : m.active
      ? `Delete “${m.title}”? The occurrence in progress ends at once, alerting resumes, and no later occurrence happens.`
      : `Delete “${m.title}”${m.recurrenceRule ? ' and all its occurrences' : ''}?`;
  return (
    <li>
      <div className="spread">
        <strong>{m.title}</strong>
        {m.active && <span className="status degraded">In progress</span>}
      </div>
      {m.description && <p className="small prose-text">{m.description}</p>}
      <div className="small">
        {m.recurrenceRule ? <RecurrenceText rule={m.recurrenceRule} timezone={m.timezone} /> : 'Once'}
        {' · '}{m.monitorIds.length} monitor{m.monitorIds.length === 1 ? '' : 's'}
        {m.keepChecking ? ' · checks keep running' : ' · checks paused'}
      </div>
      <div className="muted small">
        {m.nextOccurrence
          ? <>{m.active ? 'Now' : 'Next'}: <time dateTime={m.nextOccurrence.startsAt}>{formatDateTime(m.nextOccurrence.startsAt)}</time> – <time dateTime={m.nextOccurrence.endsAt}>{formatDateTime(m.nextOccurrence.endsAt)}</time></>
          : 'No occurrence ahead.'}
      </div>
      {can('maintenance:manage') && (
        <div className="row">
          <Link className="button secondary" to={`/maintenance/${m.id}/edit`} aria-label={`Edit ${m.title}`}>Edit</Link>
          <ConfirmButton label={ending ? 'End now' : 'Delete'} name={`${ending ? 'End now' : 'Delete'} ${m.title}`} question={confirmText}
            confirmLabel={ending ? 'End it now' : 'Delete it'} pending={remove.isPending} onConfirm={() => remove.mutate()} />
        </div>
      )}
      <FormError error={remove.error} />
    </li>
  );
}
