import type { OperationId } from '../../gen/routes';
import { ApiError } from '../pipeline/errors';

/**
 * Operations of the contract whose feature a later issue builds. Each answers
 * 501 `not_implemented` after the pipeline (auth, limits, permission,
 * validation) has run, so callers see the real contract everywhere else.
 * test/not-implemented.test.ts lists exactly these.
 */
export const NOT_IMPLEMENTED = [
  // Status pages
  'listStatusPages', 'createStatusPage', 'getStatusPage', 'updateStatusPage', 'deleteStatusPage', 'addStatusPageComponent', 'removeStatusPageComponent',
  // Error tracking
  'uploadSourceMap', 'uploadSymbols', 'listErrorProjects', 'listErrorIssues', 'getErrorIssue', 'updateErrorIssue',
  // Analytics
  'listAnalyticsSites', 'getAnalyticsSite',
  // Members, sessions, organisations, billing, agents, search, export
  'listMembers', 'inviteMember', 'updateMember', 'removeMember', 'deleteInvitation',
  'deleteAccount', 'listOrganizations', 'setActiveOrganization', 'createSmsEnrolment', 'confirmSmsEnrolment',
  'listAgents', 'enrollAgent', 'deleteAgent', 'getAgentMetrics',
  'getBilling', 'verifyStorePurchase', 'searchResources', 'exportEntity', 'exportAll',
] as const satisfies readonly OperationId[];

export type NotImplementedId = (typeof NOT_IMPLEMENTED)[number];

/** Marks a handler the runner answers 501 for, before validating the request. */
export const NOT_BUILT = Symbol('not built');

/** The 501 error of `operationId`. */
export function notImplementedError(operationId: string): ApiError {
  return new ApiError(501, 'not_implemented', `${operationId} is part of the contract but not built yet.`, { operationId });
}

/** A handler that answers 501 for `operationId`. */
export function notImplemented(operationId: string) {
  const handler = async (): Promise<never> => { throw notImplementedError(operationId); };
  return Object.assign(handler, { [NOT_BUILT]: true });
}

/** The 501 handlers, keyed by operation. */
export const notImplementedHandlers = Object.fromEntries(NOT_IMPLEMENTED.map((id) => [id, notImplemented(id)])) as unknown as {
  [K in NotImplementedId]: () => Promise<never>;
};
