import { useMe } from '../../lib/me';

/** One count against its cap: the words, and a bar for the eye (hidden from screen readers, which have the words). */
function Row({ what, used, cap }: { what: string; used: number; cap: number | null }) {
  const share = cap ? Math.min(1, used / cap) : 0;
  return (
    <tr>
      <th scope="row">{what}</th>
      <td>{cap == null ? `${used.toLocaleString()} (no limit)` : `${used.toLocaleString()} of ${cap.toLocaleString()}`}</td>
      <td className="meter-cell" aria-hidden="true">
        {cap != null && <span className={`meter${share >= 1 ? ' full' : share >= 0.8 ? ' near' : ''}`}><span style={{ width: `${share * 100}%` }} /></span>}
      </td>
    </tr>
  );
}

/** What the plan allows (with add-on packs) and what the organisation uses of it, from /me. */
export function PlanUsage() {
  const { me } = useMe();
  const e = me.entitlements;
  const u = me.usage;
  return (
    <section className="card" aria-labelledby="usage">
      <h2 id="usage">Usage</h2>
      <table className="usage">
        <caption className="visually-hidden">Usage against the plan’s limits</caption>
        <thead><tr><th scope="col">Resource</th><th scope="col">Used</th><th scope="col"><span className="visually-hidden">Share</span></th></tr></thead>
        <tbody>
          <Row what="Monitors" used={u.monitors} cap={e.monitorCap} />
          <Row what="Members (with pending invitations)" used={u.members} cap={e.memberCap} />
          <Row what="Status pages" used={u.statusPages} cap={e.statusPageCap} />
        </tbody>
      </table>
      <dl className="facts">
        <dt>Shortest check interval</dt><dd>{e.intervalFloorSeconds} seconds</dd>
        <dt>History kept</dt><dd>{e.historyRetentionDays} days</dd>
        <dt>SMS alerts</dt><dd>{e.smsIncluded ? 'Included' : 'Not included'}</dd>
        <dt>Audit log</dt><dd>{e.auditLogIncluded ? 'Included' : 'Not included'}</dd>
        <dt>Workspaces</dt><dd>{u.workspaces}</dd>
        <dt>Active API keys</dt><dd>{u.apiKeys}</dd>
      </dl>
    </section>
  );
}
