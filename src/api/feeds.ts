import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';

/** The incident feed token. */
export const feedHandlers = {} satisfies Partial<Handlers<Ctx>>;
