import { useMemo } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import type { Schema } from '../lib/api';
import { q } from '../lib/queries';
import { StatusBadge } from './StatusBadge';
import { UptimeBars } from './UptimeBars';
import { formatPercent } from '../lib/format';

type Monitor = Schema<'Monitor'>;

/** How many monitors of a workspace the overview lists; the rest are a link away (the list is virtualised). */
const SHOWN = 25;
const RANK: Record<string, number> = { down: 0, degraded: 1, pending: 2, up: 3, paused: 4 };

/** Monitors grouped by workspace, the troubled ones first, each with a 24-hour uptime sparkline. */
export function WorkspaceMonitors({ monitors }: { monitors: Monitor[] }) {
  // The sparklines come from one read for all monitors, after the list is on screen.
  const graphs = useQuery(q.graphs());
  const sparks = useMemo(() => new Map((graphs.data ?? []).map((g) => [g.monitorId, g.uptime.map((p) => p.ratio)])), [graphs.data]);
  const groups = useMemo(() => {
    const byWs = new Map<string, { name: string; id: string; monitors: Monitor[] }>();
    for (const m of monitors) {
      const g = byWs.get(m.workspace.id) ?? { name: m.workspace.name, id: m.workspace.id, monitors: [] };
      g.monitors.push(m);
      byWs.set(m.workspace.id, g);
    }
    for (const g of byWs.values()) g.monitors.sort((a, b) => (RANK[a.status] ?? 9) - (RANK[b.status] ?? 9) || a.name.localeCompare(b.name));
    return [...byWs.values()].sort((a, b) => a.name.localeCompare(b.name));
  }, [monitors]);
  return (
    <>
      {groups.map((g) => {
        const down = g.monitors.filter((m) => m.status === 'down').length;
        return (
          <section key={g.id} className="card" aria-labelledby={`ws-${g.id}`}>
            <div className="spread">
              <h2 id={`ws-${g.id}`}>{g.name}</h2>
              <span className="muted small">{g.monitors.length} monitor{g.monitors.length === 1 ? '' : 's'}{down ? `, ${down} down` : ''}</span>
            </div>
            <ul className="plain">
              {g.monitors.slice(0, SHOWN).map((m) => (
                <li key={m.id} className="spread">
                  <span className="row"><StatusBadge status={m.status} /><Link to={`/monitors/${m.id}`}>{m.name}</Link></span>
                  <span className="row small">
                    {sparks.has(m.id) && <UptimeBars className="spark" ratios={sparks.get(m.id)!} label={`${m.name}: uptime over the last 24 hours, ${formatPercent(m.uptime24h)}`} />}
                    <span className="muted">{formatPercent(m.uptime24h)}</span>
                  </span>
                </li>
              ))}
            </ul>
            {g.monitors.length > SHOWN && <p><Link to={`/monitors?workspace=${g.id}`}>All {g.monitors.length} monitors of {g.name}</Link></p>}
          </section>
        );
      })}
    </>
  );
}
