import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { api, ok, VigilApiError } from '../lib/api';
import { keys } from '../lib/queries';

/**
 * Pauses or resumes the selected monitors, one update each (the contract has
 * no bulk update): writes count against the organisation's write limit, so a
 * 429 stops the run and says how far it got.
 */
export function BulkPause({ selected, onDone }: { selected: Set<string>; onDone: () => void }) {
  const qc = useQueryClient();
  const [progress, setProgress] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (paused: boolean) => {
    setBusy(true);
    const ids = [...selected];
    let done = 0;
    try {
      for (const id of ids) {
        await ok(api.PATCH('/monitors/{id}', { params: { path: { id } }, body: { paused } }));
        done++;
        setProgress(`${paused ? 'Paused' : 'Resumed'} ${done} of ${ids.length}…`);
      }
      setProgress(`${paused ? 'Paused' : 'Resumed'} ${done} monitor${done === 1 ? '' : 's'}.`);
      onDone();
    } catch (e) {
      const why = e instanceof VigilApiError && e.status === 429 ? `the write limit was reached; try the rest in ${e.retryAfterSeconds ?? 60} s` : (e as Error).message;
      setProgress(`${paused ? 'Paused' : 'Resumed'} ${done} of ${ids.length}: ${why}.`);
    } finally {
      setBusy(false);
      void qc.invalidateQueries({ queryKey: keys.monitors });
      void qc.invalidateQueries({ queryKey: keys.summary });
    }
  };
  return (
    <div className="row" role="group" aria-label="Bulk actions">
      <button type="button" className="secondary" disabled={busy || selected.size === 0} onClick={() => void run(true)}>Pause selected ({selected.size})</button>
      <button type="button" className="secondary" disabled={busy || selected.size === 0} onClick={() => void run(false)}>Resume selected</button>
      {progress && <span role="status" className="small">{progress}</span>}
    </div>
  );
}
