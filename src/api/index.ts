import type { Handlers } from '../../gen/routes';
import type { Ctx } from '../pipeline/context';
import { accountHandlers } from './account';
import { hostHandlers } from './hosts';
import { metaHandlers } from './meta';
import { monitorHandlers } from './monitors';
import { notImplementedHandlers } from './notImplemented';
import { workspaceHandlers } from './workspaces';
import { incidentHandlers } from './incidents';
import { probeHandlers } from './probes';
import { channelHandlers } from './channels';
import { maintenanceHandlers } from './maintenance';
import { oncallHandlers } from './oncall';
import { feedHandlers } from './feeds';
import { alertingHandlers } from './alerting';
import { statusPageHandlers } from './statusPages';
import { memberHandlers } from './members';
import { sessionHandlers } from './sessions';
import { smsHandlers } from './sms';
import { billingHandlers } from './billing';
import { errorHandlers } from './errors';
import { analyticsHandlers } from './analytics';
import { agentHandlers } from './agents';
import { searchHandlers } from './search';
import { exportHandlers } from './export';
import { streamHandlers } from './stream';

/** Every operation of the contract: a missing one fails `tsc`. */
export const handlers: Handlers<Ctx> = {
  // The 501s first: a built handler listed below replaces its entry.
  ...notImplementedHandlers,
  ...metaHandlers,
  ...monitorHandlers,
  ...workspaceHandlers,
  ...accountHandlers,
  ...hostHandlers,
  ...incidentHandlers,
  ...probeHandlers,
  ...channelHandlers,
  ...maintenanceHandlers,
  ...oncallHandlers,
  ...feedHandlers,
  ...alertingHandlers,
  ...statusPageHandlers,
  ...memberHandlers,
  ...sessionHandlers,
  ...smsHandlers,
  ...billingHandlers,
  ...errorHandlers,
  ...analyticsHandlers,
  ...agentHandlers,
  ...searchHandlers,
  ...exportHandlers,
  ...streamHandlers,
};
