/** One field a request got wrong. */
export interface FieldProblem { field: string; reason: string }

/** The wire shape of every non-2xx body. */
export interface ErrorBody {
  error: string;
  code: string;
  vars: Record<string, string>;
  details: { field: string; reason: string; fields: FieldProblem[] } | null;
}

/**
 * A failure with an HTTP status and a stable code. Domain code throws these;
 * the transport renders them, so no handler ever writes an error body itself.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly vars: Record<string, string> = {},
    readonly fields: FieldProblem[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  /** The body sent to the client. */
  toBody(): ErrorBody {
    const [first] = this.fields;
    return {
      error: this.message,
      code: this.code,
      vars: this.vars,
      details: first ? { field: first.field, reason: first.reason, fields: this.fields } : null,
    };
  }
}

/** 400 with a code and the field at fault. */
export function invalid(field: string, reason: string, code = 'invalid_field'): ApiError {
  return new ApiError(400, code, `Invalid ${field}: ${reason}.`, { field }, [{ field, reason }]);
}

/** 404 for a record that does not exist for this caller (other organisations' rows included). */
export function notFound(what = 'record', field?: string): ApiError {
  return new ApiError(404, 'not_found', `No such ${what}.`, { resource: what }, field ? [{ field, reason: `no such ${what}` }] : []);
}

/** 403 naming the missing permission. */
export function forbidden(permission: string): ApiError {
  return new ApiError(403, 'forbidden', `This key lacks the permission ${permission}.`, { permission });
}

/** 409 for a state conflict. */
export function conflict(code: string, message: string, vars: Record<string, string> = {}, field?: string): ApiError {
  return new ApiError(409, code, message, vars, field ? [{ field, reason: message }] : []);
}

/** 402 `limit_reached`: a plan cap refusal (spec: vars plan, limit, current, resource, all strings). */
export function limitReached(plan: string, resource: string, limit: number, current: number): ApiError {
  return new ApiError(402, 'limit_reached', `The ${plan} plan allows ${limit} ${resource}; the organisation has ${current}.`, {
    plan, limit: String(limit), current: String(current), resource,
  });
}

/** 401 with one message for every kind of bad credential. */
export function unauthorized(): ApiError {
  return new ApiError(401, 'unauthorized', 'Missing or invalid API key.');
}
