import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';

/** Acting on incidents: acknowledge, resolve, comment, postmortem. */
export const alertingHandlers = {} satisfies Partial<Handlers<Ctx>>;
