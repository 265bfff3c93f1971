import fs from 'node:fs';
import path from 'node:path';
import type { RouteDef } from '../../gen/routes';
import { ROOT } from '../paths';

/**
 * Protobuf cannot send a null, and absent means null for a StringList: a
 * required StringList body field that a protobuf (or Connect) request left out
 * is therefore null, not missing. The names come from the contract once.
 */
const requiredLists = (() => {
  const doc = JSON.parse(fs.readFileSync(path.join(ROOT, 'gen/openapi.json'), 'utf8'));
  const out = new Map<string, string[]>();
  for (const [name, schema] of Object.entries<any>(doc.components.schemas)) {
    if (!name.endsWith('Body')) continue;
    const lists = (schema.required ?? []).filter((f: string) => schema.properties?.[f]?.$ref === '#/components/schemas/StringList');
    if (lists.length) out.set(name.slice(0, -4), lists);
  }
  return out;
})();

/** Sets a required StringList that a protobuf body omitted to null. */
export function fillAbsentLists(route: RouteDef, body: Record<string, unknown>): Record<string, unknown> {
  const op = route.operationId[0].toUpperCase() + route.operationId.slice(1);
  for (const f of requiredLists.get(op) ?? []) if (!(f in body)) body[f] = null;
  return body;
}
