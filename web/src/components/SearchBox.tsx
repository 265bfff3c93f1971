import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useLocation, useNavigate } from 'react-router';

/** True when a key press is typed into a field (where "/" is a character, not the shortcut). */
function typing(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName));
}

/**
 * The header's search field: "/" or Ctrl+K (⌘K) from anywhere focuses it,
 * Enter opens the search page with the results grouped by type. Nothing is
 * read while typing here: one search per Enter keeps within the read limit.
 */
export function SearchBox() {
  const navigate = useNavigate();
  const location = useLocation();
  const input = useRef<HTMLInputElement>(null);
  const [text, setText] = useState('');
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const ctrlK = (e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'k';
      if (ctrlK || (e.key === '/' && !typing(e.target) && !e.altKey && !e.ctrlKey && !e.metaKey)) {
        e.preventDefault();
        input.current?.focus();
        input.current?.select();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
  // On the search page its own field is the one to use.
  if (location.pathname === '/search') return null;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const q = text.trim();
    if (!q) return;
    setText('');
    input.current?.blur();
    void navigate(`/search?q=${encodeURIComponent(q)}`);
  };
  return (
    <form role="search" className="searchbox" onSubmit={submit}>
      <input ref={input} type="search" aria-label="Search Vigil" aria-keyshortcuts="/ Control+K" placeholder="Search (press /)" value={text}
        maxLength={200} onChange={(e) => setText(e.target.value)} />
    </form>
  );
}
