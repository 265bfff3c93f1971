import { useQuery } from '@tanstack/react-query';
import { q } from '../lib/queries';
import { CopyField } from './CopyField';

/** A heartbeat's ping URL (itself the credential), with a copy button. */
export function PushUrl({ id }: { id: string }) {
  const push = useQuery(q.pushUrl(id));
  const url = push.data?.url;
  if (!url) return null;
  return <CopyField label="Ping URL" value={url} hint="GET or POST it when the job runs; append /fail to report a failed run." />;
}
