import { useSyncExternalStore } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { openStream, streamState } from '../live/stream';

/**
 * Said only while live updates are off (the server refused the stream; it is
 * tried again by itself): the page shows what it loaded, and a refresh reads
 * it again — the app never polls in the background.
 */
export function StreamBanner() {
  const qc = useQueryClient();
  const state = useSyncExternalStore(streamState.subscribe, streamState.get);
  if (state !== 'unavailable') return null;
  return (
    <div className="banner info" role="status">
      <span>Live updates are off for now; what you see may be out of date.</span>
      <button type="button" className="secondary" onClick={() => { void qc.invalidateQueries(); openStream(qc); }}>Refresh</button>
    </div>
  );
}
