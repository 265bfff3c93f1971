/** Small helpers shared by the on-call page and its forms. */
import type { Schema } from './api';

export type Person = Schema<'OnCallPerson'> | Schema<'Member'>;
export type OnCallData = Schema<'OnCallData'>;

/** A person as people know them: the name, else the address. */
export const who = (p: Person | null | undefined) => (p ? p.name ?? p.email : 'Nobody');


/** `YYYY-MM-DDTHH:MM` of a datetime-local input, in the browser's zone. */
export function toLocalInput(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A datetime-local value (the browser's zone) as RFC 3339; '' stays '' so the server names the field. */
export function fromLocalInput(v: string): string {
  const d = new Date(v);
  return v && !Number.isNaN(d.getTime()) ? d.toISOString() : v;
}
