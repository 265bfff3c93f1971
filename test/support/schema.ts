/**
 * Reading the contract's JSON Schemas (the `openapi.json` the server serves,
 * or `openapi.yaml` parsed) to make plausible request bodies (values that
 * pass the schema's own patterns and minimum list sizes): shared by the
 * contract fuzzer, the access property test and the free-text bounds sweep.
 */

export type Schema = {
  $ref?: string; type?: string | string[]; properties?: Record<string, Schema>; required?: string[]; items?: Schema;
  enum?: unknown[]; format?: string; pattern?: string; oneOf?: Schema[]; anyOf?: Schema[]; allOf?: Schema[]; minimum?: number; minLength?: number;
  maxLength?: number; minItems?: number; minProperties?: number; additionalProperties?: boolean | Schema; contentEncoding?: string;
};
export type Spec = { paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: Schema }> } }>>; components: { schemas: Record<string, Schema> } };

/** A real id for a field named `name` (`workspaceId`, `monitorIds`, …), or undefined when the name points to nothing known. */
export type IdFor = (name: string) => string | undefined;

export interface SchemaTools {
  /** The schema behind `$ref`s, with `allOf` merged. */
  resolve(s: Schema | undefined): Schema | undefined;
  /** The JSON type a value of `s` has (the non-null one of a nullable type). */
  typeOf(s: Schema | undefined): string;
  /** A plausible value of `s` (for field `name`): the required fields only, real ids where `idFor` knows the name. */
  plausible(s: Schema | undefined, name: string, idFor: IdFor): unknown;
  /** The JSON body schema of an operation, resolved. */
  bodySchema(path: string, method: string): Schema | undefined;
}

/** Values that satisfy the contract's patterns (a made-up string would not). */
const PATTERN_SAMPLES: Record<string, string> = {
  '^#[0-9a-fA-F]{6}$': '#336699',
  '^([01][0-9]|2[0-3]):[0-5][0-9]$': '09:00',
};

export function schemaTools(spec: Spec): SchemaTools {
  const resolve = (s: Schema | undefined): Schema | undefined => {
    let cur = s;
    for (let i = 0; cur?.$ref && i < 10; i++) cur = spec.components.schemas[cur.$ref.split('/').pop()!];
    if (cur?.allOf) return cur.allOf.map(resolve).reduce<Schema>((a, b) => ({ ...a, ...b, properties: { ...a.properties, ...b?.properties }, required: [...(a.required ?? []), ...(b?.required ?? [])] }), {});
    return cur;
  };
  const typeOf = (s: Schema | undefined): string => {
    const t = s?.type;
    if (Array.isArray(t)) return t.find((x) => x !== 'null') ?? 'string';
    return t ?? (s?.properties ? 'object' : s?.oneOf || s?.anyOf ? 'object' : 'string');
  };
  const plausible = (s0: Schema | undefined, name: string, idFor: IdFor, depth = 0): unknown => {
    const s = resolve(s0);
    if (!s || depth > 4) return null;
    if (s.enum?.length) return s.enum.find((e) => e !== null) ?? null;
    if (s.oneOf?.length || s.anyOf?.length) return plausible((s.oneOf ?? s.anyOf)![0], name, idFor, depth + 1);
    const id = idFor(name);
    switch (typeOf(s)) {
      case 'integer': case 'number': return Math.max(s.minimum ?? 1, 1);
      case 'boolean': return false;
      case 'array': {
        if (id !== undefined && name.endsWith('Ids')) return [id];
        return s.minItems ? Array.from({ length: s.minItems }, () => plausible(s.items, name.replace(/s$/, ''), idFor, depth + 1)) : [];
      }
      case 'object': {
        const out: Record<string, unknown> = {};
        for (const k of s.required ?? []) out[k] = plausible(s.properties?.[k], k, idFor, depth + 1);
        return out;
      }
      default:
        if (id !== undefined) return id;
        if (s.pattern && PATTERN_SAMPLES[s.pattern]) return PATTERN_SAMPLES[s.pattern];
        if (s.format === 'email' || /email/i.test(name)) return 'someone@example.test';
        if (s.format === 'uri' || /url$/i.test(name)) return 'https://example.com/hook';
        if (s.format === 'date-time' || /At$/.test(name)) return new Date(Date.now() + 3_600_000).toISOString();
        if (/domain|host/i.test(name)) return `fuzz-${Math.random().toString(36).slice(2, 8)}.example.com`;
        return `fuzz ${name}`.slice(0, Math.max(s.minLength ?? 1, 12));
    }
  };
  return {
    resolve,
    typeOf,
    plausible: (s, name, idFor) => plausible(s, name, idFor),
    bodySchema: (path, method) => resolve(spec.paths[path]?.[method.toLowerCase()]?.requestBody?.content?.['application/json']?.schema),
  };
}
