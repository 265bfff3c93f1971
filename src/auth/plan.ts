import type { Caller } from './caller';

/** The plan columns every credential resolves (joined as `p`). */
export const PLAN_COLUMNS = [
  'p.code', 'p.name as plan_name', 'p.rank', 'p.monitor_cap', 'p.interval_floor_seconds', 'p.history_retention_days',
  'p.sms_included', 'p.audit_log_included', 'p.status_page_cap', 'p.member_cap', 'o.add_on_packs',
] as const;

/** What one add-on pack adds to the plan's caps (documented in the README). */
export const ADD_ON_PACK = { monitors: 50, members: 5, statusPages: 2 } as const;

const plus = (cap: number | null, per: number, packs: number) => (cap === null ? null : cap + per * packs);

/** The caller's plan from a row selected with PLAN_COLUMNS (plans as `p`, organizations as `o`). */
export function planOf(row: {
  code: string; plan_name: string; rank: number; monitor_cap: number | null; interval_floor_seconds: number; history_retention_days: number;
  sms_included: boolean; audit_log_included: boolean; status_page_cap: number | null; member_cap: number | null; add_on_packs: number;
}): Caller['plan'] {
  // Entitlements: the plan's limits with the organisation's add-on packs summed (every cap reads these).
  const packs = row.add_on_packs;
  return {
    code: row.code, name: row.plan_name, rank: row.rank, monitor_cap: plus(row.monitor_cap, ADD_ON_PACK.monitors, packs),
    interval_floor_seconds: row.interval_floor_seconds, history_retention_days: row.history_retention_days,
    sms_included: row.sms_included, audit_log_included: row.audit_log_included,
    status_page_cap: plus(row.status_page_cap, ADD_ON_PACK.statusPages, packs), member_cap: plus(row.member_cap, ADD_ON_PACK.members, packs),
  };
}
