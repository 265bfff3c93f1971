import { useMutation, useQueryClient, type QueryKey } from '@tanstack/react-query';
import { ConfirmButton } from './ConfirmButton';
import { FormError } from './FormError';

/**
 * A delete asked first in place (`question`, see ConfirmButton), then
 * invalidating `invalidate`; a refusal is shown beside it in the server's words.
 */
export function DeleteButton({ label, text = 'Delete', question, run, invalidate }: {
  label: string; text?: string; question: string; run: () => Promise<unknown>; invalidate: QueryKey;
}) {
  const qc = useQueryClient();
  const remove = useMutation({ mutationFn: run, onSettled: () => qc.invalidateQueries({ queryKey: invalidate }) });
  return (
    <>
      <ConfirmButton label={text} name={label} question={question} confirmLabel={`Yes, ${text.toLowerCase()}`} pending={remove.isPending} onConfirm={() => remove.mutate()} />
      <FormError error={remove.error} />
    </>
  );
}
