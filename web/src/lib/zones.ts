/** Time zones as forms offer them (maintenance windows, on-call schedules). */

/** The person's own time zone (the browser's): the default of a new window or schedule. */
export const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/** Every IANA zone the browser knows, with `keep` (a stored zone it may not list) and UTC always present, sorted. */
export function zoneList(keep: string): string[] {
  const all = new Set(typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : []);
  all.add('UTC');
  if (keep) all.add(keep);
  return [...all].sort();
}
