import { useQuery } from '@tanstack/react-query';
import { q } from '../../lib/queries';
import { qs } from '../../lib/queries-settings';
import { useMe } from '../../lib/me';
import { Loading } from '../../components/Loading';
import { ErrorView } from '../../components/ErrorView';
import { ApiKeyForm } from '../../components/ApiKeyForm';
import { ApiKeyRow } from '../../components/ApiKeyRow';

/** API keys: every key the caller may see (owners and admins: all; others: their own), creating and revoking them. */
export default function ApiKeys() {
  const { can } = useMe();
  const list = useQuery(qs.apiKeys());
  const workspaces = useQuery(q.workspaces());
  const workspaceName = (id: string) => workspaces.data?.find((w) => w.id === id)?.name ?? id;
  const active = list.data?.filter((k) => !k.revokedAt && !(k.expiresAt && new Date(k.expiresAt).getTime() <= Date.now())).length ?? 0;
  return (
    <>
      <h2>API keys</h2>
      <p className="muted">A key acts for the person who made it, with their role — never more — narrowed by its permissions and workspaces.</p>
      {list.isPending ? <Loading label="Loading API keys" />
        : list.isError ? <ErrorView error={list.error} retry={() => void list.refetch()} />
          : list.data.length === 0 ? (
            <section className="card"><p>No API key yet. {can('api_key:manage') ? 'Create one below for a script, Terraform or an agent.' : 'Ask an administrator of your organisation for one.'}</p></section>
          ) : (
            <section className="card" aria-label="API keys list">
              <p className="small muted">{active} active of {list.data.length}, newest first.</p>
              <ul className="plain">{list.data.map((k) => <ApiKeyRow key={k.id} apiKey={k} workspaceName={workspaceName} />)}</ul>
            </section>
          )}
      {can('api_key:manage') && <ApiKeyForm />}
    </>
  );
}
