import { useSyncExternalStore } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { openStream, streamState } from '../live/stream';

/**
 * Said only when live updates are off (the server refused the stream): the
 * page then shows what it loaded, and a refresh reads it again — the app
 * never polls in the background.
 */
export function StreamBanner() {
  const qc = useQueryClient();
  const state = useSyncExternalStore(streamState.subscribe, streamState.get);
  if (state !== 'unavailable') return null;
  return (
    <div className="banner info" role="status">
      <span>Live updates are unavailable on this server; what you see may be out of date.</span>
      <button type="button" className="secondary" onClick={() => { void qc.invalidateQueries(); openStream(qc); }}>Refresh</button>
    </div>
  );
}
