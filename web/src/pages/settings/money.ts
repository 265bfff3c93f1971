/** An amount in the smallest unit of its currency (cents, or yen), in the person's language. */
export function formatMoney(amountMinor: number, currency: string): string {
  try {
    const f = new Intl.NumberFormat(undefined, { style: 'currency', currency });
    return f.format(amountMinor / 10 ** (f.resolvedOptions().maximumFractionDigits ?? 2));
  } catch {
    return `${(amountMinor / 100).toFixed(2)} ${currency}`; // a code Intl does not know
  }
}
