import type { Schema } from '../../lib/api';
import { formatDateTime } from '../../lib/format';
import { formatMoney } from './money';

/** The latest twelve receipts, latest first, each with its document where there is one. */
export function Receipts({ receipts }: { receipts: Array<Schema<'Receipt'>> }) {
  return (
    <section className="card" aria-labelledby="receipts">
      <h2 id="receipts">Receipts</h2>
      {receipts.length === 0 ? <p>No receipts yet: one appears here after each payment.</p> : (
        <ul className="plain">
          {receipts.map((r) => (
            <li key={r.id} className="spread">
              <span>{formatDateTime(r.issuedAt)} · <strong>{formatMoney(r.amountCents, r.currency)}</strong></span>
              {r.url ? <a href={r.url} target="_blank" rel="noopener noreferrer">Download the receipt of {formatDateTime(r.issuedAt)}</a>
                : <span className="muted small">No document</span>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
