import { useMemo } from 'react';
import { rrulestr } from 'rrule';

/** A recurrence rule in words ("every week on Sunday"), in its own time zone; the rule as written when it cannot be read. */
export function RecurrenceText({ rule, timezone }: { rule: string; timezone: string }) {
  const text = useMemo(() => {
    try {
      const r = rrulestr(rule.replace(/^RRULE:/i, ''));
      return r.isFullyConvertibleToText() ? r.toText() : null;
    } catch {
      return null;
    }
  }, [rule]);
  const words = text ? text.charAt(0).toUpperCase() + text.slice(1) : rule;
  return <span>{words} <span className="muted">({timezone})</span></span>;
}
