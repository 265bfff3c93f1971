import { useQuery } from '@tanstack/react-query';
import { q } from '../lib/queries';
import { CopyButton } from './CopyButton';

/** A heartbeat's ping URL (itself the credential), with a copy button. */
export function PushUrl({ id }: { id: string }) {
  const push = useQuery(q.pushUrl(id));
  const url = push.data?.url;
  if (!url) return null;
  return (
    <div className="field">
      <label htmlFor="push-url">Ping URL</label>
      <div className="row">
        <input id="push-url" readOnly value={url} size={48} onFocus={(e) => e.target.select()} />
        <CopyButton text={url} label="Copy the ping URL" />
      </div>
      <span className="hint">GET or POST it when the job runs; append /fail to report a failed run.</span>
    </div>
  );
}
