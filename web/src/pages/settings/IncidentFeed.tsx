import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../../lib/api';
import { accountKeys, qa } from '../../lib/queries-account';
import { useMe } from '../../lib/me';
import { formatDateTime } from '../../lib/format';
import { Loading } from '../../components/Loading';
import { ErrorView } from '../../components/ErrorView';
import { ConfirmButton } from '../../components/ConfirmButton';
import { CopyField } from '../../components/CopyField';
import { FormError } from '../../components/FormError';

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
  const done = () => void qc.invalidateQueries({ queryKey: accountKeys.incidentFeed });
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
          {feed.data.active ? (
            <>
              <ConfirmButton label="Replace the URLs…" name="Replace the URLs…" danger={false} question="The current URLs stop working at once."
                confirmLabel="Replace the URLs" pending={busy} onConfirm={() => rotate.mutateAsync()} />
              <ConfirmButton label="Revoke the feed…" name="Revoke the feed…" question="The feed URLs stop working at once."
                confirmLabel="Revoke the feed" pending={busy} onConfirm={() => revoke.mutateAsync()} />
            </>
          ) : (
            <button type="button" disabled={busy} onClick={() => rotate.mutate()}>Create the feed URLs</button>
          )}
        </div>
      )}
      {revoke.isSuccess && <p role="status" className="notice">Feed revoked: its URLs answer “not found” from now on.</p>}
      <FormError error={rotate.error ?? revoke.error} />
    </section>
  );
}
