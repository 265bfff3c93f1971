/** A JSON Schema object (draft 2020-12) for a kind's config document. */
export type ConfigSchema = Record<string, unknown>;

/**
 * What every check kind provides. The engine (scheduler and check runner)
 * adds the `check` step; the API needs the config contract.
 */
export interface CheckKind {
  /** JSON Schema of the kind's `config` document; defaults are filled in on create. */
  configSchema: ConfigSchema;
  /** Top-level config fields holding credentials (stripped from exports, never audited). */
  sealedFields: readonly string[];
  /** True when monitors of this kind have a ping URL. */
  hasPingUrl: boolean;
}

const assertion = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'operator', 'value'],
  properties: {
    type: { type: 'string' },
    operator: { enum: ['eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'contains', 'not_contains', 'matches'] },
    value: { type: 'string' },
    property: { type: 'string', minLength: 1, description: 'the header name (header) or JSONPath expression (json_path)' },
  },
} as const;

/** The assertion shape, restricted to a kind's assertion types. */
export function assertionsSchema(types: readonly string[]) {
  return { type: 'array', maxItems: 50, default: [], items: { ...assertion, properties: { ...assertion.properties, type: { enum: types } } } };
}

/** SNMP thresholds: `{reading, operator, value}`, `reading` naming an `oids[].name`. */
export const readingAssertionsSchema = {
  type: 'array', maxItems: 50, default: [],
  items: {
    type: 'object', additionalProperties: false, required: ['reading', 'operator', 'value'],
    properties: { reading: { type: 'string', minLength: 1 }, operator: assertion.properties.operator, value: { type: 'string' } },
  },
} as const;

export const hostname = { type: 'string', minLength: 1, maxLength: 253, pattern: '^[^\\s/]+$' } as const;
export const port = { type: 'integer', minimum: 1, maximum: 65535 } as const;
