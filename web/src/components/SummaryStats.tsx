import { useQuery } from '@tanstack/react-query';
import { q } from '../lib/queries';

/** The summary's counts; live events move them in place. */
export function SummaryStats() {
  const summary = useQuery(q.summary());
  if (!summary.data) return null;
  const s = summary.data;
  const items: Array<[string, number]> = [
    ['Monitors', s.total], ['Up', s.up], ['Down', s.down], ['Degraded', s.degraded], ['Paused', s.paused], ['Open incidents', s.openIncidents],
  ];
  return (
    <section aria-label="Summary" className="grid">
      {items.map(([label, n]) => <div key={label} className="stat"><strong>{n}</strong><span className="muted">{label}</span></div>)}
    </section>
  );
}
