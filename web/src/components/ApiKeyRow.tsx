import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api, ok, type Schema } from '../lib/api';
import { settingsKeys } from '../lib/queries-settings';
import { formatDateTime, formatRelative } from '../lib/format';
import { useMe } from '../lib/me';
import { ConfirmButton } from './ConfirmButton';
import { FormError } from './FormError';

type Key = Schema<'ApiKey'>;

/** Active, expired or revoked, in words (never colour alone). */
function keyState(k: Key, now: number): [string, string] {
  if (k.revokedAt) return ['Revoked', 'paused'];
  if (k.expiresAt && new Date(k.expiresAt).getTime() <= now) return ['Expired', 'paused'];
  return ['Active', 'up'];
}

/** One key: what it may do and where, its dates, and revoking it after a confirmation. */
export function ApiKeyRow({ apiKey: k, workspaceName }: { apiKey: Key; workspaceName: (id: string) => string }) {
  const { can } = useMe();
  const qc = useQueryClient();
  const revoke = useMutation({
    mutationFn: () => ok(api.DELETE('/api-keys', { params: { query: { id: k.id } } })),
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: settingsKeys.apiKeys });
      void qc.invalidateQueries({ queryKey: settingsKeys.audit });
    },
  });
  const now = Date.now();
  const [state, cls] = keyState(k, now);
  return (
    <li aria-label={`Key ${k.name}`}>
      <div className="spread">
        <span><strong>{k.name}</strong> <code className="small">{k.prefix}…</code></span>
        <span className={`status ${cls}`}>{state}</span>
      </div>
      <dl className="facts small">
        <dt>Permissions</dt><dd>{k.scopes.length ? k.scopes.join(', ') : 'Everything its owner’s role allows'}</dd>
        <dt>Workspaces</dt><dd>{k.workspaceIds ? k.workspaceIds.map(workspaceName).join(', ') : 'The whole organisation'}</dd>
        <dt>Owner</dt><dd>{k.owner.name ? `${k.owner.name} (${k.owner.email})` : k.owner.email}</dd>
        <dt>Created</dt><dd>{formatDateTime(k.createdAt)}</dd>
        <dt>Last used</dt><dd>{k.lastUsedAt ? <time dateTime={k.lastUsedAt} title={formatDateTime(k.lastUsedAt)}>{formatRelative(k.lastUsedAt, now)}</time> : 'Never'}</dd>
        <dt>{k.revokedAt ? 'Revoked' : 'Expires'}</dt>
        <dd>{k.revokedAt ? formatDateTime(k.revokedAt) : k.expiresAt ? formatDateTime(k.expiresAt) : 'Never'}</dd>
      </dl>
      {can('api_key:manage') && !k.revokedAt && (
        <div className="row small">
          <ConfirmButton label="Revoke" name={`Revoke ${k.name}`} confirmLabel={`Yes, revoke ${k.name}`} pending={revoke.isPending} onConfirm={() => revoke.mutate()}
            question={`Revoke “${k.name}”? Whatever uses it is refused from now on; this cannot be undone.`} />
        </div>
      )}
      <FormError error={revoke.error} />
    </li>
  );
}
