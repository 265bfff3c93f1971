import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import { accountHandlers } from './account';
import { metaHandlers } from './meta';
import { monitorHandlers } from './monitors';
import { notImplementedHandlers } from './notImplemented';
import { workspaceHandlers } from './workspaces';

/** Every operation of the contract: a missing one fails `tsc`. */
export const handlers: Handlers<Ctx> = {
  // The 501s first: a built handler listed below replaces its entry.
  ...notImplementedHandlers,
  ...metaHandlers,
  ...monitorHandlers,
  ...workspaceHandlers,
  ...accountHandlers,
};
