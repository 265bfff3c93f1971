import type { ErrorObject, ValidateFunction } from 'ajv';
import { ApiError, type FieldProblem } from './errors';

function dotted(instancePath: string): string {
  return instancePath.replace(/^\//, '').split('/').filter(Boolean).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')).join('.');
}

function join(base: string, name: string): string {
  return [base, name].filter(Boolean).join('.');
}

/** Turns ajv errors into field problems with dotted paths (`assertions.0.type`). */
export function problemsOf(errors: ErrorObject[] | null | undefined, root = ''): FieldProblem[] {
  const out: FieldProblem[] = [];
  const seen = new Set<string>();
  for (const e of errors ?? []) {
    const at = join(root, dotted(e.instancePath));
    let field = at;
    let reason = e.message ?? 'is invalid';
    if (e.keyword === 'required') { field = join(at, String(e.params.missingProperty)); reason = 'is required'; }
    else if (e.keyword === 'additionalProperties') { field = join(at, String(e.params.additionalProperty)); reason = 'is not a known field'; }
    else if (e.keyword === 'enum') reason = `must be one of ${(e.params.allowedValues as unknown[]).map(String).join(', ')}`;
    else if (e.keyword === 'oneOf' || e.keyword === 'anyOf') continue; // the branch errors say more
    const key = `${field}|${reason}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ field, reason });
  }
  return out;
}

function codeOf(e: ErrorObject | undefined): string {
  switch (e?.keyword) {
    case 'required': return 'missing_field';
    case 'additionalProperties': return 'unknown_field';
    case 'minProperties': return e.instancePath === '' ? 'empty_change' : 'invalid_field';
    default: return 'invalid_field';
  }
}

/** Runs `validate` on `data`; throws 400 naming the first offending field. */
export function check(validate: ValidateFunction | undefined, data: unknown, where: 'body' | 'query'): void {
  if (!validate || validate(data)) return;
  const errors = validate.errors ?? [];
  const first = errors.find((e) => e.keyword !== 'oneOf' && e.keyword !== 'anyOf') ?? errors[0];
  const code = where === 'query' && codeOf(first) === 'invalid_field' ? 'invalid_query' : codeOf(first);
  if (code === 'empty_change') {
    throw new ApiError(400, 'empty_change', 'The request changes nothing: name at least one field.', {}, [{ field: 'body', reason: 'names no field' }]);
  }
  // Every item of a long list may fail alike: the first problems say enough.
  const fields = problemsOf(errors).slice(0, 20);
  const f = { ...(fields[0] ?? { field: where, reason: 'is invalid' }) };
  if (!f.field) f.field = where;
  for (const p of fields) if (!p.field) p.field = where;
  throw new ApiError(400, code, `Invalid ${where === 'query' ? 'query parameter' : 'field'} ${f.field}: ${f.reason}.`, { field: f.field }, fields);
}
