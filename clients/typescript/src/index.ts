/** Vigil's TypeScript client: the contract's types (openapi-typescript) and an openapi-fetch client. */
export { createVigilClient, ok, type VigilClient, type VigilClientOptions } from './client.js';
export { VigilApiError, retryAfterSeconds, toApiError, type ApiErrorBody, type FieldProblem } from './errors.js';
export { RateLimitState } from './rateLimit.js';
export type { paths, components, operations } from './schema.js';

import type { components } from './schema.js';
/** The contract's schemas by name: `Schema<'Monitor'>`. */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];
