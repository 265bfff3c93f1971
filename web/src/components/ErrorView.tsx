import { VigilApiError } from '../lib/api';

/** A read that failed: what happened in words, and a way to try again. */
export function ErrorView({ error, retry }: { error: unknown; retry?: () => void }) {
  const e = error instanceof VigilApiError ? error : null;
  const text = e?.status === 429
    ? 'Vigil is limiting requests for your organisation. This page loads again by itself when the wait is over.'
    : e?.status === 404 ? 'This was not found. It may have been deleted, or it is outside your workspaces.'
      : e?.code === 'network_error' ? 'Vigil could not be reached. Check your connection.'
        : `Something went wrong: ${e?.message ?? String(error)}`;
  return (
    <div role="alert" className="card">
      <p>{text}</p>
      {retry && e?.status !== 404 && <button type="button" className="secondary" onClick={retry}>Try again</button>}
    </div>
  );
}
