import { useMutation, useQueryClient, type QueryKey } from '@tanstack/react-query';
import { VigilApiError } from '../lib/api';

/**
 * A delete that asks first (`question`), then invalidates `invalidate`; a
 * refusal is shown beside the button in the server's words.
 */
export function DeleteButton({ label, text = 'Delete', question, run, invalidate }: {
  label: string; text?: string; question: string; run: () => Promise<unknown>; invalidate: QueryKey;
}) {
  const qc = useQueryClient();
  const remove = useMutation({ mutationFn: run, onSettled: () => qc.invalidateQueries({ queryKey: invalidate }) });
  return (
    <>
      <button type="button" className="danger" aria-label={label} disabled={remove.isPending}
        onClick={() => { if (window.confirm(question)) remove.mutate(); }}>{text}</button>
      {remove.error && <span role="alert" className="error small">{remove.error instanceof VigilApiError ? remove.error.message : String(remove.error)}</span>}
    </>
  );
}
