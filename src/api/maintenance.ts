import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';

/** Maintenance windows. */
export const maintenanceHandlers = {} satisfies Partial<Handlers<Ctx>>;
