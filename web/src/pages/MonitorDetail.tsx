import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from 'react-router';
import { q } from '../lib/queries';
import { useMe } from '../lib/me';
import { Loading } from '../components/Loading';
import { ErrorView } from '../components/ErrorView';
import { StatusBadge } from '../components/StatusBadge';
import { UptimeBars } from '../components/UptimeBars';
import { ResponseChart } from '../components/ResponseChart';
import { MonitorActions } from '../components/MonitorActions';
import { KindDetail } from '../components/KindDetail';
import { PushUrl } from '../components/PushUrl';
import { MonitorIncidents } from '../components/MonitorIncidents';
import { KIND_LABELS } from '../components/MonitorFilters';
import { formatDateTime, formatPercent, formatRelative } from '../lib/format';

const RANGES: Array<[number, string]> = [[24, '24 hours'], [72, '3 days'], [168, '7 days']];

/** One monitor: its status, history, response times, incidents and the kind's own findings. */
export default function MonitorDetail() {
  const { id = '' } = useParams();
  const { can } = useMe();
  const [hours, setHours] = useState(24);
  const monitor = useQuery(q.monitor(id));
  const history = useQuery(q.history(id));
  const graph = useQuery(q.monitorGraph(id, hours));
  if (monitor.isPending) return <Loading label="Loading the monitor" />;
  if (monitor.isError) return <ErrorView error={monitor.error} retry={() => void monitor.refetch()} />;
  const m = monitor.data;
  return (
    <>
      <p className="small"><Link to="/monitors">Monitors</Link> › {m.workspace.name}</p>
      <div className="spread">
        <h1>{m.name}</h1>
        {can('monitor:update') && <Link className="button secondary" to={`/monitors/${m.id}/edit`}>Edit</Link>}
      </div>
      <section className="card" aria-label="Status">
        <div className="spread">
          <span className="row"><StatusBadge status={m.status} /><span className="muted">since <time dateTime={m.statusSince}>{formatDateTime(m.statusSince)}</time></span></span>
          <MonitorActions monitor={m} />
        </div>
        <dl className="facts">
          <dt>Kind</dt><dd>{KIND_LABELS[m.kind]}</dd>
          <dt>Last check</dt><dd>{m.lastCheckedAt ? <time dateTime={m.lastCheckedAt}>{formatRelative(m.lastCheckedAt)}</time> : 'Not checked yet'}{m.lastMessage ? ` — ${m.lastMessage}` : ''}</dd>
          <dt>Response time</dt><dd>{m.lastResponseTimeMs === null ? '—' : `${Math.round(m.lastResponseTimeMs)} ms`}</dd>
          <dt>Uptime</dt><dd>{formatPercent(m.uptime24h)} (24 h), {formatPercent(m.uptime30d)} (30 days)</dd>
          <dt>Checked every</dt><dd>{m.intervalSeconds} s</dd>
          {m.tags.length > 0 && <><dt>Tags</dt><dd>{m.tags.join(', ')}</dd></>}
        </dl>
        {m.kind === 'heartbeat' && <PushUrl id={m.id} />}
      </section>
      <section className="card" aria-labelledby="history-title">
        <h2 id="history-title">Uptime by day</h2>
        {history.data ? (
          <>
            <UptimeBars ratios={history.data.days.map((d) => (d.uptime === null ? null : d.uptime / 100))}
              label={`Uptime per day over the last ${history.data.days.length} days`} />
            <div className="spread muted small"><span>{history.data.days[0]?.date}</span><span>Today</span></div>
          </>
        ) : history.isError ? <ErrorView error={history.error} /> : <Loading label="Loading history" />}
      </section>
      {m.kind !== 'heartbeat' && m.kind !== 'snmp' && (
        <section className="card" aria-labelledby="rt-title">
          <div className="spread">
            <h2 id="rt-title">Response time</h2>
            <div className="tabs" role="group" aria-label="Time range">
              {RANGES.map(([h, label]) => <button key={h} type="button" aria-pressed={hours === h} onClick={() => setHours(h)}>{label}</button>)}
            </div>
          </div>
          {graph.data ? <ResponseChart graph={graph.data} /> : graph.isError ? <ErrorView error={graph.error} /> : <Loading label="Loading the chart" />}
        </section>
      )}
      <KindDetail monitor={m} />
      <MonitorIncidents monitorId={m.id} />
    </>
  );
}
