import { routes, type UnbuiltOperationId } from '../../gen/routes';
import { ApiError } from '../pipeline/errors';

/**
 * Operations of the contract whose feature a later issue builds: those whose
 * contract documents a 501 response (the contract is the one list). Each
 * answers 501 `not_implemented` after authentication, the rate limit and the
 * permission check, so callers see the real contract everywhere else; the
 * `/api/v1` index marks them `built: false`.
 */
export const NOT_IMPLEMENTED = routes.filter((r) => !r.built).map((r) => r.operationId) as readonly string[] as readonly UnbuiltOperationId[];

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
  [K in UnbuiltOperationId]: () => Promise<never>;
};
