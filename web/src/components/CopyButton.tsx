import { useState } from 'react';

/** Copies `text` to the clipboard and says so (or says to copy by hand when the browser refuses). */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [said, setSaid] = useState('');
  const copy = () => {
    navigator.clipboard.writeText(text).then(
      () => setSaid('Copied.'),
      () => setSaid('The browser refused to copy: select the text and copy it.'),
    );
  };
  return (
    <>
      <button type="button" className="secondary" onClick={copy}>{label}</button>
      <span role="status" className="small">{said}</span>
    </>
  );
}
