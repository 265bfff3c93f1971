/**
 * The contract and what `npm run gen` made of it: OpenAPI and proto agree, the
 * checker notices when they do not, the route table mirrors every operation,
 * and the generated validators enforce the schemas.
 */
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { checkConsistency, PROJECT_ROOT } from '../scripts/gen/consistency';
import { routes } from '../gen/routes';
import { bodyValidators, queryValidators, responseValidators } from '../gen/validators.cjs';
import { tempDir } from './support/child';

const openapi = parse(readFileSync(join(PROJECT_ROOT, 'openapi.yaml'), 'utf8'));
const METHODS = ['get', 'put', 'post', 'patch', 'delete'];
const operations: Array<{ method: string; path: string; op: any }> = Object.entries<any>(openapi.paths).flatMap(([path, item]) =>
  METHODS.filter((m) => item[m]).map((method) => ({ method, path, op: item[method] })),
);

describe('consistency check', () => {
  it('finds no mismatch between openapi.yaml and proto/', () => {
    expect(checkConsistency(PROJECT_ROOT)).toEqual([]);
  });

  describe('on a copy with seeded mismatches', () => {
    let dir: string;
    beforeAll(() => {
      dir = tempDir('vigil-contract-');
      cpSync(join(PROJECT_ROOT, 'proto'), join(dir, 'proto'), { recursive: true });
      cpSync(join(PROJECT_ROOT, 'buf.yaml'), join(dir, 'buf.yaml'));
      cpSync(join(PROJECT_ROOT, 'openapi.yaml'), join(dir, 'openapi.yaml'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('names a proto field renamed away from its OpenAPI property', () => {
      const file = join(dir, 'proto/vigil/v1/common.proto');
      const text = readFileSync(file, 'utf8');
      const renamed = text.replace(/(message FieldProblem \{[^}]*?)string reason = 2;/, '$1string cause = 2;');
      expect(renamed).not.toEqual(text);
      writeFileSync(file, renamed);
      const problems = checkConsistency(dir);
      expect(problems).toEqual(expect.arrayContaining([
        expect.stringMatching(/FieldProblem\.reason: no field with JSON name "reason"/),
        expect.stringMatching(/vigil\.v1\.FieldProblem\.cause .*has no OpenAPI counterpart/),
      ]));
      writeFileSync(file, text);
    });

    it('names an operation without x-bucket and a property whose type changed', () => {
      const doc = structuredClone(openapi);
      const first = operations[0];
      delete doc.paths[first.path][first.method]['x-bucket'];
      doc.components.schemas.FieldProblem.properties.field = { type: 'integer' };
      const problems = checkConsistency(dir, doc);
      expect(problems).toContain(`operation ${first.op.operationId}: missing x-bucket`);
      expect(problems).toContain('schema FieldProblem.field: OpenAPI int vs proto string');
    });
  });
});

describe('route table', () => {
  it('has exactly one route per OpenAPI operation', () => {
    expect(routes.map((r) => r.operationId).sort()).toEqual(operations.map((o) => o.op.operationId).sort());
  });

  it.each(operations.map((o) => [o.op.operationId, o] as const))('%s carries its method, path, permission and bucket', (id, { method, path, op }) => {
    const route = routes.find((r) => r.operationId === id)!;
    expect(route).toMatchObject({
      method: method.toUpperCase(),
      path,
      expressPath: path.replace(/\{(\w+)\}/g, ':$1'),
      permission: op['x-permission'],
      permissions: op['x-permissions'] ?? (op['x-permission'] ? [op['x-permission']] : []),
      bucket: op['x-bucket'],
      sessionOnly: op['x-session-only'] === true,
      rpc: id.charAt(0).toUpperCase() + id.slice(1),
    });
  });

  it('lists a static segment before a parameter at the same position', () => {
    for (const [i, r] of routes.entries()) {
      const segs = r.path.split('/');
      for (const later of routes.slice(i + 1)) {
        const other = later.path.split('/');
        if (later.method !== r.method || other.length !== segs.length) continue;
        const clash = segs.every((s, k) => s === other[k] || s.startsWith('{') || other[k].startsWith('{'));
        const k = segs.findIndex((s, n) => s !== other[n]);
        if (clash && k >= 0) expect(`${r.path} before ${later.path}: ${segs[k]}`).not.toMatch(/: \{/);
      }
    }
  });
});

describe('generated validators', () => {
  const createWorkspace = bodyValidators.createWorkspace;

  it('accept a good body', () => {
    expect(createWorkspace({ name: 'Operations' })).toBe(true);
  });

  it('reject a bad body with errors naming the field', () => {
    expect(createWorkspace({ name: 42 })).toBe(false);
    expect(createWorkspace.errors).toEqual(expect.arrayContaining([expect.objectContaining({ instancePath: '/name' })]));
    expect(createWorkspace({})).toBe(false);
    expect(createWorkspace.errors).toEqual(expect.arrayContaining([expect.objectContaining({ params: { missingProperty: 'name' } })]));
    expect(createWorkspace({ name: 'Ops', surprise: true })).toBe(false);
    expect(createWorkspace.errors).toEqual(expect.arrayContaining([expect.objectContaining({ params: { additionalProperty: 'surprise' } })]));
  });

  it('coerce query strings to the declared types and keep unknown keys', () => {
    const route = routes.find((r) => r.queryParams.some((p) => p.type === 'integer' && !p.required))!;
    const param = route.queryParams.find((p) => p.type === 'integer')!;
    const query: Record<string, unknown> = { [param.name]: '5', unknownKey: 'x' };
    const validate = queryValidators[route.operationId];
    if (!validate(query)) throw new Error(JSON.stringify(validate.errors));
    expect(query[param.name]).toBe(5);
    expect(query.unknownKey).toBe('x');
    expect(validate({ [param.name]: 'five' })).toBe(false);
    expect(validate.errors?.[0]?.instancePath).toBe(`/${param.name}`);
  });

  it('check success responses against the contract', () => {
    const del = routes.find((r) => r.method === 'DELETE' && responseValidators[r.operationId])!;
    const validate = responseValidators[del.operationId];
    expect(validate({ data: { id: 'x', deleted: true } })).toBe(true);
    expect(validate({ data: { id: 'x' } })).toBe(false);
    expect(validate.errors).toEqual(expect.arrayContaining([expect.objectContaining({ params: { missingProperty: 'deleted' } })]));
  });
});
