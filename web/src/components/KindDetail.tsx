import type { Schema } from '../lib/api';

const TITLES: Record<string, string> = { tls_audit: 'TLS certificate and configuration', mail_posture: 'Mail posture', snmp: 'SNMP readings' };

/** What the latest check of a TLS, mail or SNMP monitor found. */
export function KindDetail({ monitor: m }: { monitor: Schema<'Monitor'> }) {
  if (!(m.kind in TITLES)) return null;
  const d = m.lastCheckDetail;
  return (
    <section className="card" aria-labelledby="kind-title">
      <h2 id="kind-title">{TITLES[m.kind]}</h2>
      {!d ? <p className="muted">Nothing yet: the first check has not run.</p> : (
        <>
          {d.grade && <p>Grade <strong>{d.grade}</strong></p>}
          {d.readings.length > 0 && (
            <table>
              <caption className="visually-hidden">Readings</caption>
              <thead><tr><th scope="col">Reading</th><th scope="col">Value</th><th scope="col">OID</th></tr></thead>
              <tbody>
                {d.readings.map((r) => (
                  <tr key={r.name}><td>{r.name}</td><td>{r.value ?? r.text ?? '—'}{r.unit ? ` ${r.unit}` : ''}</td><td className="muted small">{r.oid ?? '—'}</td></tr>
                ))}
              </tbody>
            </table>
          )}
          {d.findings.length > 0 ? (
            <ul className="plain">
              {d.findings.map((f, i) => (
                <li key={i}><strong className={f.severity === 'critical' ? 'error' : undefined}>{f.severity}</strong> {f.message} <span className="muted small">({f.code})</span></li>
              ))}
            </ul>
          ) : <p className="muted">No findings.</p>}
        </>
      )}
    </section>
  );
}
