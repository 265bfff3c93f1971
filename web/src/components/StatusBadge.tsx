const LABELS: Record<string, string> = {
  up: 'Up', down: 'Down', degraded: 'Degraded', paused: 'Paused', pending: 'Pending',
  open: 'Open', acknowledged: 'Acknowledged', resolved: 'Resolved', suppressed: 'Suppressed',
};

/** A monitor's or incident's status as a coloured dot and a word (never colour alone). */
export function StatusBadge({ status }: { status: string }) {
  return <span className={`status ${status}`}>{LABELS[status] ?? status}</span>;
}
