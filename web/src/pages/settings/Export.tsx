import { useState, type FormEvent } from 'react';
import { useMutation } from '@tanstack/react-query';
import { VigilApiError } from '../../lib/api';
import { useMe } from '../../lib/me';
import { formatTime } from '../../lib/format';
import { Field } from '../../components/Field';
import { downloadExport, ENTITIES, EXPORT_LIMIT_PER_HOUR, HOURLY_WINDOW_DAYS, readLedger, writeLedger, type ExportQuery } from '../../lib/exportFile';

/** A `datetime-local` value (the person's own time zone) as RFC 3339, or undefined when empty. */
const isoOf = (local: string) => (local ? new Date(local).toISOString() : undefined);

/**
 * Export: everything the caller can read as one zip (with its manifest), or
 * one entity as a file, in CSV or JSON, over a window; downloaded by the
 * browser. The hourly budget is stated before it is spent.
 */
export default function Export() {
  const { me, can } = useMe();
  const orgId = me.organization.id;
  const readable = ENTITIES.filter((e) => can(e.needs));
  const [what, setWhat] = useState('');
  const [format, setFormat] = useState<'csv' | 'json'>('csv');
  const [bom, setBom] = useState(false);
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [check, setCheck] = useState<{ field: 'from' | 'to'; reason: string } | null>(null);
  const [ledger, setLedger] = useState(() => readLedger(orgId));

  const run = useMutation({
    mutationFn: (query: ExportQuery) => {
      const l = readLedger(orgId);
      l.started.push(Date.now());
      writeLedger(orgId, l);
      setLedger(l);
      return downloadExport(what || null, query);
    },
    onError: (e) => {
      if (e instanceof VigilApiError && e.status === 429 && e.retryAfterSeconds !== null) {
        const l = { ...readLedger(orgId), refusedUntil: Date.now() + e.retryAfterSeconds * 1000 };
        writeLedger(orgId, l);
        setLedger(l);
      }
    },
  });

  const entity = ENTITIES.find((e) => e.name === what);
  // The zip holds the hourly series whenever the caller reads monitors, so it has their limit too.
  const hourly = entity ? !!entity.hourly : can('monitor:read');
  const submit = (ev: FormEvent) => {
    ev.preventDefault();
    // The documented refusals are checked here first: a refused export still spends one of the hour's exports.
    const f = from ? new Date(from).getTime() : null;
    const t = to ? new Date(to).getTime() : Date.now();
    if (f !== null && f >= t) return setCheck({ field: 'from', reason: 'must be before To' });
    if (hourly && f !== null && t - f > HOURLY_WINDOW_DAYS * 86_400_000) {
      return setCheck({ field: 'from', reason: `hourly series cover at most ${HOURLY_WINDOW_DAYS} days per export; choose a From within ${HOURLY_WINDOW_DAYS} days of To` });
    }
    setCheck(null);
    run.mutate({ format, from: isoOf(from), to: isoOf(to), ...(format === 'csv' && bom ? { bom: true } : {}) });
  };

  const e = run.error instanceof VigilApiError ? run.error : null;
  const fieldError = (field: 'from' | 'to') => (check?.field === field ? check.reason : null) ?? e?.fieldReason(field) ?? null;
  const left = EXPORT_LIMIT_PER_HOUR - ledger.started.length;
  if (readable.length === 0) {
    return <><h2>Export</h2><section className="card"><p>Your role reads none of the exportable data, so there is nothing to export.</p></section></>;
  }
  return (
    <>
      <h2>Export</h2>
      <p className="muted">Your organisation’s data as files, to keep or to move. Exports hold no credentials: no channel settings, no monitor configuration, no tokens.</p>
      <section className="card" aria-labelledby="export-limit">
        <h3 id="export-limit">Hourly limit</h3>
        <p>
          Your organisation may export <strong>{EXPORT_LIMIT_PER_HOUR} times an hour</strong>, everyone together; a refused export counts too.
          {' '}This browser started <strong>{ledger.started.length}</strong> in the last hour{left > 0 ? `, so at most ${left} remain` : ', so none may remain'} (exports by others are not counted here: Vigil does not tell how many are left).
        </p>
        {ledger.refusedUntil && <p className="error">Vigil refused the last export for the hour: exports are possible again at {formatTime(ledger.refusedUntil)}.</p>}
      </section>
      <section className="card" aria-labelledby="export-form">
        <h3 id="export-form">New export</h3>
        <form onSubmit={submit}>
          <Field label="What" hint={what ? 'One file.' : 'A zip: one file per kind of data you can read, and manifest.json listing them (and what was left out, and why).'}>
            <select value={what} onChange={(x) => setWhat(x.target.value)}>
              <option value="">Everything I can read (zip)</option>
              {readable.map((en) => <option key={en.name} value={en.name}>{en.label}</option>)}
            </select>
          </Field>
          <fieldset>
            <legend>Format</legend>
            <label className="check"><input type="radio" name="format" checked={format === 'csv'} onChange={() => setFormat('csv')} /> CSV (spreadsheets)</label>
            <label className="check"><input type="radio" name="format" checked={format === 'json'} onChange={() => setFormat('json')} /> JSON</label>
            {format === 'csv' && <label className="check"><input type="checkbox" checked={bom} onChange={(x) => setBom(x.target.checked)} /> Start with a byte order mark (for Excel)</label>}
          </fieldset>
          <div className="filters">
            <Field label="From" hint={hourly ? `Empty: from the beginning; hourly series from ${HOURLY_WINDOW_DAYS} days before To.` : 'Empty: from the beginning.'} error={fieldError('from')}>
              <input type="datetime-local" value={from} onChange={(x) => setFrom(x.target.value)} />
            </Field>
            <Field label="To" hint="Empty: now. Your time zone." error={fieldError('to')}>
              <input type="datetime-local" value={to} onChange={(x) => setTo(x.target.value)} />
            </Field>
          </div>
          {e && !e.fieldReason('from') && !e.fieldReason('to') && (
            <p role="alert" className="error">
              {e.status === 429 ? `Vigil says: “${e.message}”` : e.message}
            </p>
          )}
          <div className="row">
            <button type="submit" disabled={run.isPending}>{run.isPending ? 'Exporting…' : 'Export and download'}</button>
            <span role="status" className="small">{run.isPending ? 'Preparing the file; the download starts by itself.' : run.data ? `Downloaded ${run.data}.` : ''}</span>
          </div>
        </form>
      </section>
    </>
  );
}
