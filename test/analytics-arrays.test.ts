/**
 * src/db/arrayLiteral.ts (the analytics drain's unnest parameters): every
 * element comes back from PostgreSQL as sent, tricky text included.
 */
import pg from 'pg';
import { arrayLiteral } from '../src/db/arrayLiteral';

const url = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
let client: pg.Client;
beforeAll(async () => { client = new pg.Client(url); await client.connect(); });
afterAll(async () => { await client.end(); });

const back = async (literal: string, type: string) => (await client.query(`select unnest($1::${type}[])::text as v`, [literal])).rows.map((r) => r.v as string | null);

test('text: quotes, backslashes, braces, commas, spaces, NULL as a word, empty, unicode, null', async () => {
  const values = ['plain', 'a "quoted" word', 'back\\slash', '\\"both\\"', '{braces}', 'a,b', '  spaced  ', 'NULL', 'null', '', 'café €', '\u001f\n\t', null, '\\'];
  expect(await back(arrayLiteral(values), 'text')).toEqual(values);
});

test('numbers, bigints, booleans, dates, bytea', async () => {
  expect(await back(arrayLiteral([0, -1, 42, null, 9007199254740993n, '-9223372036854775808']), 'int8')).toEqual(['0', '-1', '42', null, '9007199254740993', '-9223372036854775808']);
  expect(await back(arrayLiteral([true, false, null]), 'boolean')).toEqual(['true', 'false', null]);
  const at = new Date('2026-03-10T23:59:59.123Z');
  const { rows } = await client.query('select unnest($1::timestamptz[]) as v', [arrayLiteral([at, null])]);
  expect(rows.map((r) => r.v?.getTime() ?? null)).toEqual([at.getTime(), null]);
  expect(await back(arrayLiteral(['2026-03-10']), 'date')).toEqual(['2026-03-10']);
  const bytes = [Buffer.from([0, 1, 0x5c, 0x22, 0xff]), Buffer.alloc(0), null];
  const { rows: b } = await client.query('select unnest($1::bytea[]) as v', [arrayLiteral(bytes)]);
  expect(b.map((r) => r.v)).toEqual(bytes);
  expect(() => arrayLiteral([{}])).toThrow(TypeError);
});
