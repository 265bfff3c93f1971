import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';

/** Notification channels and the channels of a monitor. */
export const channelHandlers = {} satisfies Partial<Handlers<Ctx>>;
