import { useEffect, useState } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { api, ok, type Schema } from '../lib/api';
import { appPathOf, HIT_TYPES } from '../lib/searchRoutes';
import { Loading } from '../components/Loading';
import { ErrorView } from '../components/ErrorView';

type Hit = Schema<'SearchHit'>;

/** Typing waits this long before searching: a word typed costs one read, not one per letter. */
const DEBOUNCE_MS = 400;

/** What matched, when it is not the title, as people call it. */
const FIELDS: Partial<Record<Hit['matchedField'], string>> = {
  tags: 'Tags', monitorName: 'Monitor', body: 'Postmortem', address: 'Address', slug: 'Slug', clientReference: 'Client reference',
  email: 'E-mail', platform: 'Platform', culprit: 'Culprit', domain: 'Domain', name: 'Name', prefix: 'Key prefix', hostname: 'Host name',
};

function HitRow({ hit }: { hit: Hit }) {
  const to = appPathOf(hit);
  return (
    <li>
      {to ? <Link to={to}>{hit.title}</Link> : <strong>{hit.title}</strong>}
      {hit.subtitle && <span className="muted small"> · {hit.subtitle}</span>}
      {hit.snippet && <div className="small"><span className="muted">{FIELDS[hit.matchedField] ?? hit.matchedField}:</span> {hit.snippet}</div>}
    </li>
  );
}

/** Search across everything the caller may read (`GET /search`), grouped by type; the query lives in the address. */
export default function Search() {
  const [params, setParams] = useSearchParams();
  const q = (params.get('q') ?? '').trim();
  const [text, setText] = useState(q);
  useEffect(() => setText(q), [q]);
  useEffect(() => {
    if (text.trim() === q) return;
    const t = setTimeout(() => setParams(text.trim() ? { q: text.trim() } : {}, { replace: true }), DEBOUNCE_MS);
    return () => clearTimeout(t);
  }, [text, q, setParams]);
  const results = useQuery({
    queryKey: ['search', q],
    queryFn: () => ok(api.GET('/search', { params: { query: { q, limit: 20 } } })).then((r) => r.data),
    enabled: q.length > 0,
    placeholderData: keepPreviousData,
  });
  const groups = new Map<Hit['type'], Hit[]>();
  for (const hit of results.data ?? []) groups.set(hit.type, [...(groups.get(hit.type) ?? []), hit]);
  return (
    <>
      <h1>Search</h1>
      <form role="search" className="search-page" onSubmit={(e) => { e.preventDefault(); setParams(text.trim() ? { q: text.trim() } : {}, { replace: true }); }}>
        <label htmlFor="search-q">Search monitors, incidents, postmortems, hosts, channels, people, keys…</label>
        <input id="search-q" type="search" autoFocus value={text} maxLength={200} onChange={(e) => setText(e.target.value)} />
      </form>
      {!q ? <p className="muted">Type a name, a title, a tag, an address or words of a postmortem. Press <kbd>/</kbd> on any page to search.</p>
        : results.isPending ? <Loading label="Searching" />
          : results.isError ? <ErrorView error={results.error} retry={() => void results.refetch()} />
            : groups.size === 0 ? <section className="card"><p>Nothing matches “{q}”. Try fewer letters or another word.</p></section>
              : (
                <div aria-live="polite">
                  {[...groups].map(([type, hits]) => (
                    <section key={type} className="card" aria-labelledby={`hits-${type}`}>
                      <h2 id={`hits-${type}`}>{HIT_TYPES[type]} <span className="muted small">({hits.length}{hits.length === 20 ? '+' : ''})</span></h2>
                      <ul className="plain">{hits.map((h) => <HitRow key={`${h.type}:${h.id}`} hit={h} />)}</ul>
                    </section>
                  ))}
                </div>
              )}
    </>
  );
}
