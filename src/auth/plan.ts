import type { Caller } from './caller';

/** The plan columns every credential resolves (joined as `p`). */
export const PLAN_COLUMNS = [
  'p.code', 'p.name as plan_name', 'p.rank', 'p.monitor_cap', 'p.interval_floor_seconds', 'p.history_retention_days',
  'p.sms_included', 'p.audit_log_included', 'p.status_page_cap', 'p.member_cap',
] as const;

/** The caller's plan from a row selected with PLAN_COLUMNS. */
export function planOf(row: {
  code: string; plan_name: string; rank: number; monitor_cap: number | null; interval_floor_seconds: number; history_retention_days: number;
  sms_included: boolean; audit_log_included: boolean; status_page_cap: number | null; member_cap: number | null;
}): Caller['plan'] {
  return {
    code: row.code, name: row.plan_name, rank: row.rank, monitor_cap: row.monitor_cap,
    interval_floor_seconds: row.interval_floor_seconds, history_retention_days: row.history_retention_days,
    sms_included: row.sms_included, audit_log_included: row.audit_log_included,
    status_page_cap: row.status_page_cap, member_cap: row.member_cap,
  };
}
