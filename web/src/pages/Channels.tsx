import { useQuery } from '@tanstack/react-query';
import { q } from '../lib/queries';
import { useMe } from '../lib/me';
import { Loading } from '../components/Loading';
import { ErrorView } from '../components/ErrorView';
import { ChannelForm } from '../components/ChannelForm';
import { ChannelRow } from '../components/ChannelRow';

/** Where alerts go: every channel with its confirmation state, a test delivery, and a form for the creatable kinds. */
export default function Channels() {
  const { can } = useMe();
  const channels = useQuery(q.channels());
  return (
    <>
      <h1>Channels</h1>
      {channels.isPending ? <Loading label="Loading channels" />
        : channels.isError ? <ErrorView error={channels.error} retry={() => void channels.refetch()} />
          : channels.data.length === 0 ? (
            <section className="card"><p>No channel yet: incidents reach nobody. {can('notification_channel:manage') ? 'Add one below — an e-mail address or a webhook is enough to start.' : 'Ask a member of your organisation to add one.'}</p></section>
          ) : (
            <section className="card" aria-label="Channels list">
              <ul className="plain">{channels.data.map((c) => <ChannelRow key={c.id} channel={c} />)}</ul>
            </section>
          )}
      {can('notification_channel:manage') && <ChannelForm />}
    </>
  );
}
