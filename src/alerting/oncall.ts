import { DateTime } from 'luxon';

/**
 * On-call arithmetic, pure: who a rotation puts on call at an instant, how
 * overrides replace it, and when each escalation step fires.
 *
 * Rotation rules (createSchedule):
 * - Hand-overs are wall-clock times in the schedule's `timezone`. Hand-over 0
 *   is the first `handoffTime` on or before the schedule's `created_at` (or,
 *   once an update changed the rotation, its `rotation_from`), and
 *   it starts the first participant's shift; hand-over k is hand-over 0 plus
 *   k × `shiftLengthHours` of *local wall-clock* time (the arithmetic is done
 *   on the local date and time, then the result is placed in the zone).
 * - So hand-overs keep their local time across DST changes: a 24 h shift that
 *   spans the spring-forward night lasts 23 real hours, one spanning the
 *   fall-back night 25; a 168 h shift 167 or 169. Shift lengths that are not
 *   multiples of 24 h step the same way (8 h shifts handing over at 06:00 hand
 *   over at 06:00, 14:00 and 22:00 local every day; the shift spanning the
 *   change is 7 or 9 real hours).
 * - A hand-over that falls in a DST gap (a local time that does not exist)
 *   happens at the same wall-clock time plus the gap (02:30 → 03:30 in
 *   Europe/Berlin); an ambiguous one (the hour repeated at fall-back) takes
 *   the later, standard-time occurrence. These are luxon's rules. If two
 *   hand-overs then coincide (only possible with 1 h shifts), the empty shift
 *   between them is skipped.
 * - Instants before hand-over 0 follow the same pattern backwards.
 */

/** The schedule columns the rotation needs (a `oncall_schedules` row fits). */
export interface RotationSchedule {
  timezone: string;
  shift_length_hours: number;
  /** `HH:MM`, local to `timezone`. */
  handoff_time: string;
  /** User ids in rotation order. */
  participant_ids: readonly string[];
  created_at: Date;
  /** When a change restarted the rotation (updateSchedule); absent or null: it runs from `created_at`. */
  rotation_from?: Date | null;
}

/** The override columns on-call resolution needs (a `oncall_overrides` row fits). */
export interface CoverOverride {
  user_id: string;
  starts_at: Date;
  ends_at: Date;
  created_at: Date;
}

/** One shift of the rotation. */
export interface Rotation {
  participantIndex: number;
  /** null only when the schedule has no participants. */
  userId: string | null;
  shiftStart: Date;
  shiftEnd: Date;
}

/** Who is on call for a schedule at an instant. */
export interface OnCall {
  userId: string | null;
  viaOverride: boolean;
  /** When this person's shift or cover ends; null when nobody is on call. */
  until: Date | null;
}

const HOUR = 3_600_000;
const MINUTE = 60_000;

/** Places a naive wall-clock time (carried as UTC milliseconds) in `zone`. */
function placeWallClock(naive: number, zone: string): Date {
  const d = new Date(naive);
  const dt = DateTime.fromObject({
    year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(),
  }, { zone });
  if (!dt.isValid) throw new Error(`invalid time zone ${zone}`);
  return dt.toJSDate();
}

/** Naive wall-clock milliseconds of hand-over 0: the first `handoff_time` on or before the rotation's start (`rotation_from`, else `created_at`). */
function anchorWallClock(s: RotationSchedule): number {
  const [hh, mm] = s.handoff_time.split(':').map(Number);
  const from = s.rotation_from ?? s.created_at;
  const local = DateTime.fromJSDate(from, { zone: s.timezone });
  if (!local.isValid) throw new Error(`invalid time zone ${s.timezone}`);
  const sameDay = Date.UTC(local.year, local.month - 1, local.day, hh, mm);
  return placeWallClock(sameDay, s.timezone).getTime() <= from.getTime() ? sameDay : sameDay - 24 * HOUR;
}

/** The shift of `schedule` that contains `at` (shiftStart ≤ at < shiftEnd). */
export function rotationAt(schedule: RotationSchedule, at: Date): Rotation {
  const zone = schedule.timezone;
  const step = schedule.shift_length_hours * HOUR;
  const anchor = anchorWallClock(schedule);
  const handover = (k: number) => placeWallClock(anchor + k * step, zone);
  const t = at.getTime();
  // Real time and wall-clock time differ by at most the zone's offset changes: start near and walk.
  let k = Math.floor((t - handover(0).getTime()) / step);
  while (handover(k).getTime() > t) k--;
  while (handover(k + 1).getTime() <= t) k++;
  const n = schedule.participant_ids.length;
  const participantIndex = n ? ((k % n) + n) % n : 0;
  return { participantIndex, userId: n ? schedule.participant_ids[participantIndex] : null, shiftStart: handover(k), shiftEnd: handover(k + 1) };
}

/**
 * Who is on call at `at`, given the schedule's overrides (only this
 * schedule's). An override covering `at` (startsAt ≤ at < endsAt) wins over
 * the rotation; among overlapping ones the latest created wins. `until`:
 * for a cover, its end, or earlier when a later-created override starts
 * before it ends; for the rotation, the shift end, or earlier when an
 * override starts before it.
 */
export function onCallAt(schedule: RotationSchedule, overrides: readonly CoverOverride[], at: Date): OnCall {
  const t = at.getTime();
  const newest = [...overrides].sort((a, b) => b.created_at.getTime() - a.created_at.getTime());
  const cover = newest.find((o) => o.starts_at.getTime() <= t && t < o.ends_at.getTime());
  if (cover) {
    let until = cover.ends_at.getTime();
    for (const o of newest) {
      if (o === cover) break;
      const s = o.starts_at.getTime();
      if (s > t && s < until && o.ends_at.getTime() > s) until = s;
    }
    return { userId: cover.user_id, viaOverride: true, until: new Date(until) };
  }
  if (!schedule.participant_ids.length) return { userId: null, viaOverride: false, until: null };
  const r = rotationAt(schedule, at);
  let until = r.shiftEnd.getTime();
  for (const o of overrides) {
    const s = o.starts_at.getTime();
    if (s > t && s < until && o.ends_at.getTime() > s) until = s;
  }
  return { userId: r.userId, viaOverride: false, until: new Date(until) };
}

/** The escalation policy columns step timing needs (an `escalation_policies` row fits). */
export interface StepPolicy {
  repeat: number;
  steps: readonly { afterMinutes: number }[];
}

/** One firing of a step: which step, in which round, and its minutes after the incident opened. */
export interface StepRef { stepIndex: number; round: number; afterMinutes: number }

/** The smallest gap between rounds (createEscalationPolicy: "at least 5 minutes"). */
export const MIN_ROUND_MINUTES = 5;

/**
 * Minutes between rounds: the last step's `afterMinutes`, at least 5. Round r
 * fires step i at `steps[i].afterMinutes + r × roundMinutes` after the
 * incident opened. (With a first step at 0 minutes, round r + 1's first step
 * is due with round r's last one; both fire.)
 */
export function roundMinutes(policy: StepPolicy): number {
  const last = policy.steps[policy.steps.length - 1];
  return Math.max(last ? last.afterMinutes : 0, MIN_ROUND_MINUTES);
}

/** When step `stepIndex` of round `round` (0 = the first run) fires for an incident opened at `incidentStartedAt`. */
export function stepDueAt(policy: StepPolicy, stepIndex: number, round: number, incidentStartedAt: Date): Date {
  const step = policy.steps[stepIndex];
  if (!step) throw new RangeError(`no step ${stepIndex}`);
  return new Date(incidentStartedAt.getTime() + (step.afterMinutes + round * roundMinutes(policy)) * MINUTE);
}

/**
 * The step to fire after `stepsDone` firings (0 for a new incident: the count
 * runs across rounds, so it fits `incidents.escalation_step`); null once all
 * `steps × (repeat + 1)` firings are done.
 */
export function nextStep(policy: StepPolicy, stepsDone: number): StepRef | null {
  const n = policy.steps.length;
  if (!n || stepsDone < 0 || stepsDone >= n * (policy.repeat + 1)) return null;
  const stepIndex = stepsDone % n;
  const round = Math.floor(stepsDone / n);
  return { stepIndex, round, afterMinutes: policy.steps[stepIndex].afterMinutes + round * roundMinutes(policy) };
}
