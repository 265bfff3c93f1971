/**
 * Uptime as bars, as the status pages draw them: one bar per hour or day,
 * coloured by how much of it passed (grey: no checks). The bars are an image
 * with a summary as its accessible name.
 */
export function uptimeClass(ratio: number | null): string {
  if (ratio === null) return '';
  if (ratio >= 0.999) return 'u0';
  if (ratio >= 0.99) return 'u1';
  if (ratio >= 0.95) return 'u2';
  if (ratio >= 0.5) return 'u3';
  return 'u4';
}

export function UptimeBars({ ratios, label, className = '' }: { ratios: Array<number | null>; label: string; className?: string }) {
  const n = Math.max(ratios.length, 1);
  return (
    <svg className={`bars ${className}`} viewBox={`0 0 ${n * 4} 20`} preserveAspectRatio="none" role="img" aria-label={label}>
      {ratios.map((r, i) => <rect key={i} x={i * 4} y={0} width={3} height={20} className={uptimeClass(r)} />)}
    </svg>
  );
}
