import { useState } from 'react';

/**
 * Copies `text` to the clipboard and says so (or says to copy by hand when
 * the browser refuses). `label` is the button's name; `shown`, when given,
 * is its shorter visible text (a "Copy" beside a labelled field).
 */
export function CopyButton({ text, label, shown }: { text: string; label: string; shown?: string }) {
  const [said, setSaid] = useState('');
  const copy = () => {
    navigator.clipboard.writeText(text).then(
      () => setSaid('Copied.'),
      () => setSaid('The browser refused to copy: select the text and copy it.'),
    );
  };
  return (
    <>
      <button type="button" className="secondary" aria-label={shown ? label : undefined} onClick={copy}>{shown ?? label}</button>
      <span role="status" className="small">{said}</span>
    </>
  );
}
