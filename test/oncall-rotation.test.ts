/**
 * On-call arithmetic (src/alerting/oncall.ts), pure: rotations across DST in
 * Europe/Berlin and America/New_York for 8 h, 24 h and 168 h shifts,
 * overrides and `until`, and escalation step timing with repeat rounds.
 */
import { nextStep, onCallAt, rotationAt, roundMinutes, stepDueAt, type CoverOverride, type RotationSchedule } from '../src/alerting/oncall';

const H = 3_600_000;
const d = (iso: string) => new Date(iso);
const sched = (over: Partial<RotationSchedule>): RotationSchedule => ({
  timezone: 'UTC', shift_length_hours: 24, handoff_time: '09:00', participant_ids: ['a', 'b', 'c'], created_at: d('2024-01-10T12:00:00Z'), ...over,
});
const realHours = (r: { shiftStart: Date; shiftEnd: Date }) => (r.shiftEnd.getTime() - r.shiftStart.getTime()) / H;

describe('rotationAt: start of the rotation', () => {
  it('starts at the first hand-over on or before creation, with the first participant', () => {
    const s = sched({});
    expect(rotationAt(s, d('2024-01-10T12:00:00Z'))).toEqual({ participantIndex: 0, userId: 'a', shiftStart: d('2024-01-10T09:00:00Z'), shiftEnd: d('2024-01-11T09:00:00Z') });
    expect(rotationAt(s, d('2024-01-11T09:00:00Z')).userId).toBe('b');
    expect(rotationAt(s, d('2024-01-12T08:59:59Z')).userId).toBe('b');
    expect(rotationAt(s, d('2024-01-12T09:00:00Z')).userId).toBe('c');
    expect(rotationAt(s, d('2024-01-13T09:00:00Z')).participantIndex).toBe(0);
  });

  it('takes the previous day when the hand-over time is still ahead at creation', () => {
    const s = sched({ handoff_time: '18:30' });
    expect(rotationAt(s, d('2024-01-10T12:00:00Z'))).toMatchObject({ userId: 'a', shiftStart: d('2024-01-09T18:30:00Z'), shiftEnd: d('2024-01-10T18:30:00Z') });
  });

  it('a creation exactly at the hand-over starts the first shift there', () => {
    const s = sched({ created_at: d('2024-01-10T09:00:00Z') });
    expect(rotationAt(s, d('2024-01-10T09:00:00Z'))).toMatchObject({ userId: 'a', shiftStart: d('2024-01-10T09:00:00Z') });
  });

  it('reads the hand-over in the schedule zone', () => {
    // 09:00 in Berlin in winter is 08:00Z.
    const s = sched({ timezone: 'Europe/Berlin', created_at: d('2024-01-10T12:00:00Z') });
    expect(rotationAt(s, d('2024-01-10T12:00:00Z'))).toMatchObject({ userId: 'a', shiftStart: d('2024-01-10T08:00:00Z'), shiftEnd: d('2024-01-11T08:00:00Z') });
  });

  it('extends the pattern backwards before the start', () => {
    const s = sched({});
    expect(rotationAt(s, d('2024-01-10T08:00:00Z'))).toMatchObject({ participantIndex: 2, userId: 'c', shiftStart: d('2024-01-09T09:00:00Z') });
  });
});

describe('rotationAt across DST: Europe/Berlin', () => {
  const berlin = (over: Partial<RotationSchedule>) => sched({ timezone: 'Europe/Berlin', ...over });

  it('24 h shifts keep 09:00 local; the spring-forward shift is 23 real hours', () => {
    const s = berlin({ created_at: d('2024-03-29T12:00:00Z') }); // anchor 29 Mar 09:00 CET = 08:00Z
    const b = rotationAt(s, d('2024-03-31T06:30:00Z'));
    expect(b).toMatchObject({ userId: 'b', shiftStart: d('2024-03-30T08:00:00Z'), shiftEnd: d('2024-03-31T07:00:00Z') });
    expect(realHours(b)).toBe(23);
    expect(rotationAt(s, d('2024-03-31T07:00:00Z'))).toMatchObject({ userId: 'c', shiftEnd: d('2024-04-01T07:00:00Z') });
  });

  it('24 h shifts: the fall-back shift is 25 real hours', () => {
    const s = berlin({ created_at: d('2024-10-25T12:00:00Z') }); // anchor 25 Oct 09:00 CEST = 07:00Z
    const r = rotationAt(s, d('2024-10-27T07:30:00Z'));
    expect(r).toMatchObject({ userId: 'b', shiftStart: d('2024-10-26T07:00:00Z'), shiftEnd: d('2024-10-27T08:00:00Z') });
    expect(realHours(r)).toBe(25);
  });

  it('168 h shifts: weeks from the creation-day hand-over, 167 real hours across spring-forward', () => {
    const s = berlin({ participant_ids: ['a', 'b'], shift_length_hours: 168, created_at: d('2024-03-25T06:00:00Z') }); // Mon 07:00 CET → Sun 24 Mar 09:00
    const a = rotationAt(s, d('2024-03-31T06:59:00Z'));
    expect(a).toMatchObject({ userId: 'a', shiftStart: d('2024-03-24T08:00:00Z'), shiftEnd: d('2024-03-31T07:00:00Z') });
    expect(realHours(a)).toBe(167);
    const b = rotationAt(s, d('2024-03-31T07:00:00Z'));
    expect(b).toMatchObject({ userId: 'b', shiftEnd: d('2024-04-07T07:00:00Z') });
    expect(realHours(b)).toBe(168);
    expect(rotationAt(s, d('2024-04-10T00:00:00Z')).userId).toBe('a');
  });

  it('a hand-over in the spring-forward gap happens at the same wall-clock time plus the gap', () => {
    const s = berlin({ handoff_time: '02:30', created_at: d('2024-03-29T12:00:00Z') });
    const r = rotationAt(s, d('2024-03-31T12:00:00Z'));
    expect(r.shiftStart).toEqual(d('2024-03-31T01:30:00Z')); // 03:30 CEST
    expect(r.shiftEnd).toEqual(d('2024-04-01T00:30:00Z')); // 02:30 CEST
  });

  it('an ambiguous hand-over at fall-back takes the later (standard-time) occurrence', () => {
    const s = berlin({ handoff_time: '02:30', created_at: d('2024-10-25T12:00:00Z') });
    const r = rotationAt(s, d('2024-10-27T12:00:00Z'));
    expect(r.shiftStart).toEqual(d('2024-10-27T01:30:00Z')); // 02:30 CET
    expect(realHours(rotationAt(s, d('2024-10-27T00:00:00Z')))).toBe(25);
  });
});

describe('rotationAt across DST: America/New_York', () => {
  const ny = (over: Partial<RotationSchedule>) => sched({ timezone: 'America/New_York', ...over });

  it('8 h shifts hand over at 06:00, 14:00 and 22:00 local; the night of spring-forward is 7 real hours', () => {
    const s = ny({ participant_ids: ['a', 'b'], shift_length_hours: 8, handoff_time: '06:00', created_at: d('2024-03-09T12:00:00Z') }); // anchor 06:00 EST = 11:00Z
    expect(rotationAt(s, d('2024-03-09T12:00:00Z'))).toMatchObject({ userId: 'a', shiftStart: d('2024-03-09T11:00:00Z'), shiftEnd: d('2024-03-09T19:00:00Z') });
    expect(rotationAt(s, d('2024-03-09T20:00:00Z'))).toMatchObject({ userId: 'b', shiftEnd: d('2024-03-10T03:00:00Z') });
    const night = rotationAt(s, d('2024-03-10T09:59:00Z'));
    expect(night).toMatchObject({ participantIndex: 0, userId: 'a', shiftStart: d('2024-03-10T03:00:00Z'), shiftEnd: d('2024-03-10T10:00:00Z') });
    expect(realHours(night)).toBe(7);
    expect(rotationAt(s, d('2024-03-10T10:00:00Z'))).toMatchObject({ userId: 'b', shiftEnd: d('2024-03-10T18:00:00Z') }); // 06:00 → 14:00 EDT
  });

  it('8 h shifts: the night of fall-back is 9 real hours', () => {
    const s = ny({ shift_length_hours: 8, handoff_time: '06:00', created_at: d('2024-11-02T12:00:00Z') }); // anchor 06:00 EDT = 10:00Z
    const night = rotationAt(s, d('2024-11-03T08:00:00Z'));
    expect(night).toMatchObject({ shiftStart: d('2024-11-03T02:00:00Z'), shiftEnd: d('2024-11-03T11:00:00Z') }); // 22:00 EDT → 06:00 EST
    expect(realHours(night)).toBe(9);
  });

  it('24 h shifts keep 18:00 local across both changes', () => {
    const s = ny({ participant_ids: ['a'], handoff_time: '18:00', created_at: d('2024-03-01T00:00:00Z') });
    expect(rotationAt(s, d('2024-03-10T12:00:00Z'))).toMatchObject({ shiftStart: d('2024-03-09T23:00:00Z'), shiftEnd: d('2024-03-10T22:00:00Z') });
    expect(rotationAt(s, d('2024-11-03T12:00:00Z'))).toMatchObject({ shiftStart: d('2024-11-02T22:00:00Z'), shiftEnd: d('2024-11-03T23:00:00Z') });
  });
});

describe('rotationAt invariants', () => {
  it.each([
    ['Europe/Berlin', 1], ['Europe/Berlin', 8], ['America/New_York', 5], ['America/New_York', 168], ['Australia/Lord_Howe', 1], ['Asia/Kolkata', 7],
  ])('%s, %i h: every instant lies in its shift, and shifts chain', (timezone, hours) => {
    const s = sched({ timezone, shift_length_hours: hours, handoff_time: '02:30', created_at: d('2024-01-01T00:00:00Z') });
    for (let t = d('2024-03-01T00:00:00Z').getTime(); t < d('2024-12-01T00:00:00Z').getTime(); t += 7 * H + 13 * 60_000) {
      const r = rotationAt(s, new Date(t));
      expect(r.shiftStart.getTime()).toBeLessThanOrEqual(t);
      expect(r.shiftEnd.getTime()).toBeGreaterThan(t);
      expect(rotationAt(s, r.shiftEnd).shiftStart).toEqual(r.shiftEnd);
    }
  });
});

describe('onCallAt: overrides and until', () => {
  const s = sched({ created_at: d('2024-01-10T09:00:00Z') }); // a: 10th 09:00 → 11th 09:00
  const ov = (user: string, from: string, to: string, created: string): CoverOverride => ({ user_id: user, starts_at: d(from), ends_at: d(to), created_at: d(created) });

  it('without overrides: the rotation, until the shift ends', () => {
    expect(onCallAt(s, [], d('2024-01-10T12:00:00Z'))).toEqual({ userId: 'a', viaOverride: false, until: d('2024-01-11T09:00:00Z') });
  });

  it('a covering override wins, until its end', () => {
    const o = [ov('x', '2024-01-10T10:00:00Z', '2024-01-10T14:00:00Z', '2024-01-01T00:00:00Z')];
    expect(onCallAt(s, o, d('2024-01-10T12:00:00Z'))).toEqual({ userId: 'x', viaOverride: true, until: d('2024-01-10T14:00:00Z') });
  });

  it('an override spanning a hand-over lasts until its own end', () => {
    const o = [ov('x', '2024-01-10T20:00:00Z', '2024-01-11T20:00:00Z', '2024-01-01T00:00:00Z')];
    expect(onCallAt(s, o, d('2024-01-11T10:00:00Z'))).toEqual({ userId: 'x', viaOverride: true, until: d('2024-01-11T20:00:00Z') });
  });

  it('start inclusive, end exclusive', () => {
    const o = [ov('x', '2024-01-10T10:00:00Z', '2024-01-10T14:00:00Z', '2024-01-01T00:00:00Z')];
    expect(onCallAt(s, o, d('2024-01-10T10:00:00Z')).userId).toBe('x');
    expect(onCallAt(s, o, d('2024-01-10T14:00:00Z'))).toEqual({ userId: 'a', viaOverride: false, until: d('2024-01-11T09:00:00Z') });
  });

  it('the rotation hands over early when an override starts before the shift ends', () => {
    const o = [ov('x', '2024-01-10T18:00:00Z', '2024-01-10T20:00:00Z', '2024-01-01T00:00:00Z'), ov('y', '2024-01-12T00:00:00Z', '2024-01-12T01:00:00Z', '2024-01-01T00:00:00Z')];
    expect(onCallAt(s, o, d('2024-01-10T12:00:00Z'))).toEqual({ userId: 'a', viaOverride: false, until: d('2024-01-10T18:00:00Z') });
  });

  it('overlapping overrides: the latest created wins, whatever the order given', () => {
    const older = ov('x', '2024-01-10T10:00:00Z', '2024-01-10T16:00:00Z', '2024-01-01T00:00:00Z');
    const newer = ov('y', '2024-01-10T11:00:00Z', '2024-01-10T13:00:00Z', '2024-01-02T00:00:00Z');
    expect(onCallAt(s, [older, newer], d('2024-01-10T12:00:00Z'))).toEqual({ userId: 'y', viaOverride: true, until: d('2024-01-10T13:00:00Z') });
    expect(onCallAt(s, [newer, older], d('2024-01-10T12:00:00Z')).userId).toBe('y');
    // Before and after the newer one, the older one applies; it hands over when the newer one starts.
    expect(onCallAt(s, [newer, older], d('2024-01-10T10:30:00Z'))).toEqual({ userId: 'x', viaOverride: true, until: d('2024-01-10T11:00:00Z') });
    expect(onCallAt(s, [older, newer], d('2024-01-10T14:00:00Z'))).toEqual({ userId: 'x', viaOverride: true, until: d('2024-01-10T16:00:00Z') });
  });

  it('an older override starting inside a newer cover does not cut it short', () => {
    const newer = ov('y', '2024-01-10T10:00:00Z', '2024-01-10T16:00:00Z', '2024-01-02T00:00:00Z');
    const older = ov('x', '2024-01-10T12:00:00Z', '2024-01-10T13:00:00Z', '2024-01-01T00:00:00Z');
    expect(onCallAt(s, [older, newer], d('2024-01-10T11:00:00Z'))).toEqual({ userId: 'y', viaOverride: true, until: d('2024-01-10T16:00:00Z') });
  });

  it('nobody when the schedule has no participants and no cover', () => {
    expect(onCallAt(sched({ participant_ids: [] }), [], d('2024-01-10T12:00:00Z'))).toEqual({ userId: null, viaOverride: false, until: null });
  });
});

describe('escalation step timing', () => {
  const policy = { repeat: 2, steps: [{ afterMinutes: 0 }, { afterMinutes: 10 }, { afterMinutes: 30 }] };
  const start = d('2024-05-01T12:00:00Z');
  const mins = (x: Date) => (x.getTime() - start.getTime()) / 60_000;

  it('rounds are offset by the last step\'s afterMinutes', () => {
    expect(roundMinutes(policy)).toBe(30);
    const fired: number[] = [];
    for (let n = 0; ; n++) {
      const s = nextStep(policy, n);
      if (!s) break;
      expect(s.afterMinutes).toBe(mins(stepDueAt(policy, s.stepIndex, s.round, start)));
      fired.push(s.afterMinutes);
    }
    expect(fired).toEqual([0, 10, 30, 30, 40, 60, 60, 70, 90]);
  });

  it('nextStep counts firings across rounds and ends after steps × (repeat + 1)', () => {
    expect(nextStep(policy, 0)).toEqual({ stepIndex: 0, round: 0, afterMinutes: 0 });
    expect(nextStep(policy, 3)).toEqual({ stepIndex: 0, round: 1, afterMinutes: 30 });
    expect(nextStep(policy, 5)).toEqual({ stepIndex: 2, round: 1, afterMinutes: 60 });
    expect(nextStep(policy, 8)).toEqual({ stepIndex: 2, round: 2, afterMinutes: 90 });
    expect(nextStep(policy, 9)).toBeNull();
    expect(nextStep({ repeat: 0, steps: [{ afterMinutes: 5 }] }, 1)).toBeNull();
  });

  it('rounds are at least 5 minutes apart', () => {
    const p = { repeat: 3, steps: [{ afterMinutes: 0 }] };
    expect([0, 1, 2, 3].map((r) => mins(stepDueAt(p, 0, r, start)))).toEqual([0, 5, 10, 15]);
    const q = { repeat: 1, steps: [{ afterMinutes: 0 }, { afterMinutes: 2 }] };
    expect(mins(stepDueAt(q, 1, 1, start))).toBe(7);
  });

  it('repeat 0 runs the steps once; a single step at 10 minutes repeats every 10', () => {
    expect(nextStep({ repeat: 0, steps: [{ afterMinutes: 10 }] }, 0)).toEqual({ stepIndex: 0, round: 0, afterMinutes: 10 });
    expect(mins(stepDueAt({ repeat: 2, steps: [{ afterMinutes: 10 }] }, 0, 2, start))).toBe(30);
  });

  it('an unknown step index is a RangeError', () => {
    expect(() => stepDueAt(policy, 3, 0, start)).toThrow(RangeError);
  });
});
