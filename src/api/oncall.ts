import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';

/** On-call schedules, escalation policies and overrides. */
export const oncallHandlers = {} satisfies Partial<Handlers<Ctx>>;
