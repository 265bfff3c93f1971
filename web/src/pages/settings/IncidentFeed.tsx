import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../../lib/api';
import { accountKeys, qa } from '../../lib/queries-account';
import { useMe } from '../../lib/me';
import { formatDateTime } from '../../lib/format';
import { Loading } from '../../components/Loading';
import { ErrorView } from '../../components/ErrorView';
import { CopyField } from '../../components/CopyField';
import { ServerError } from '../../components/ServerError';

/**
 * The organisation's incident feed (RSS and Atom). Its URLs carry the token,
 * so the server shows them only when it makes them: here, once, after
 * creating or replacing. Replacing or revoking stops the old URLs at once,
 * so both ask first. It covers every workspace: a confined member cannot
 * change it.
 */
export function IncidentFeed() {
  const { can, confined } = useMe();
  const qc = useQueryClient();
  const feed = useQuery(qa.incidentFeed());
  const [asking, setAsking] = useState<'replace' | 'revoke' | null>(null);
  const done = () => { setAsking(null); void qc.invalidateQueries({ queryKey: accountKeys.incidentFeed }); };
  const rotate = useMutation({ mutationFn: () => ok(api.POST('/incident-feed')), onSuccess: () => { revoke.reset(); done(); } });
  const revoke = useMutation({ mutationFn: () => ok(api.DELETE('/incident-feed')), onSuccess: () => { rotate.reset(); done(); } });
  const manage = can('notification_channel:manage') && !confined;
  const urls = rotate.data?.data ?? null;
  const busy = rotate.isPending || revoke.isPending;
  return (
    <section className="card" aria-labelledby="feed">
      <h2 id="feed">Incident feed</h2>
      <p className="muted">
        Every incident of the organisation, across workspaces, as RSS or Atom for a feed reader. The URL is itself the password: share it only with
        people who may see your incidents.
      </p>
      {feed.isPending ? <Loading label="Loading the feed" />
        : feed.isError ? <ErrorView error={feed.error} retry={() => void feed.refetch()} />
          : feed.data.active ? (
            <p>The feed is on, since {formatDateTime(feed.data.createdAt!)}.{!urls && manage ? ' Its URLs were shown when they were made; replace them to see new ones.' : ''}</p>
          ) : (
            <p>No feed yet.{manage ? ' Create one to follow incidents in a feed reader.' : ' A member who manages notification channels can create one.'}</p>
          )}
      {urls && (
        <div role="status" className="notice">
          <p>Copy these now: they are not shown again.</p>
          <CopyField label="RSS feed URL" value={urls.rssUrl} />
          <CopyField label="Atom feed URL" value={urls.atomUrl} />
        </div>
      )}
      {manage && feed.data && (
        <div className="row">
          {asking ? (
            <>
              <span>{asking === 'replace' ? 'The current URLs stop working at once.' : 'The feed URLs stop working at once.'}</span>
              <button type="button" className={asking === 'revoke' ? 'danger' : undefined} disabled={busy}
                onClick={() => (asking === 'replace' ? rotate.mutate() : revoke.mutate())}>
                {asking === 'replace' ? 'Replace the URLs' : 'Revoke the feed'}
              </button>
              <button type="button" className="secondary" onClick={() => setAsking(null)}>Cancel</button>
            </>
          ) : feed.data.active ? (
            <>
              <button type="button" className="secondary" onClick={() => setAsking('replace')}>Replace the URLs…</button>
              <button type="button" className="secondary" onClick={() => setAsking('revoke')}>Revoke the feed…</button>
            </>
          ) : (
            <button type="button" disabled={busy} onClick={() => rotate.mutate()}>Create the feed URLs</button>
          )}
        </div>
      )}
      {revoke.isSuccess && <p role="status" className="notice">Feed revoked: its URLs answer “not found” from now on.</p>}
      <ServerError error={rotate.error ?? revoke.error} />
    </section>
  );
}
