import { ApiError } from '../src/pipeline/errors';
import { parsePool } from '../src/errors/parsePool';

const log = { error: jest.fn() } as never;
const big = (message: string, extra = 'x'.repeat(4000)) => JSON.stringify({ event_id: 'ab'.repeat(16), message, extra: { pad: extra } });
const envelope = (...events: string[]) => Buffer.from(['{"dsn":"https://k@example.test/1"}', ...events.flatMap((e) => ['{"type":"event"}', e])].join('\n'));

test('bodies parsed on the thread and inline alike: ids, the dsn, summaries and the payload bytes as sent', async () => {
  const pool = parsePool(log);
  const large = await pool.parse('envelope', envelope(big('on the thread')));
  const small = await pool.parse('envelope', envelope(JSON.stringify({ message: 'inline' })));
  for (const [r, message] of [[large, 'on the thread'], [small, 'inline']] as const) {
    expect(r.dsn).toBe('https://k@example.test/1');
    expect(r.events).toHaveLength(1);
    expect(JSON.parse(r.events[0].summary!)).toMatchObject({ g: { title: message, level: 'error' }, release: null });
    expect(JSON.parse(Buffer.from(r.events[0].raw).toString('utf8')).message).toBe(message);
  }
  expect(large.events[0].eventId).toBe('ab'.repeat(16));
  expect(small.events[0].eventId).toMatch(/^[0-9a-f]{32}$/);
});

test('many requests at once each get their own answer; a malformed body is refused alone with its reason', async () => {
  const pool = parsePool(log);
  const bodies = Array.from({ length: 200 }, (_, i) => (i % 7 === 3 ? Buffer.from(`{}\n{"type":"event"}\n{not json${' '.repeat(3000)}`) : envelope(big(`event ${i}`))));
  const results = await Promise.allSettled(bodies.map((b) => pool.parse('envelope', b)));
  results.forEach((r, i) => {
    if (i % 7 === 3) {
      expect(r.status).toBe('rejected');
      const e = (r as PromiseRejectedResult).reason as ApiError;
      expect(e).toBeInstanceOf(ApiError);
      expect([e.status, e.code, e.headers['X-Sentry-Error']]).toEqual([400, 'invalid_envelope', 'an event is not JSON']);
    } else {
      expect(r.status).toBe('fulfilled');
      expect(JSON.parse((r as PromiseFulfilledResult<{ events: { summary: string | null }[] }>).value.events[0].summary!).g.title).toBe(`event ${i}`);
    }
  });
});

test('invalid UTF-8 in a payload is stored with the bytes replaced, never as invalid text', async () => {
  const pool = parsePool(log);
  const text = big('caf\u00e9');
  const bytes = Buffer.from(text, 'utf8');
  const at = bytes.indexOf(Buffer.from('\u00e9', 'utf8'));
  bytes[at] = 0xff; // no longer valid UTF-8
  const r = await pool.parse('store', bytes);
  const stored = Buffer.from(r.events[0].raw);
  expect(stored.toString('utf8')).toContain('caf\ufffd');
  expect(Buffer.from(stored.toString('utf8'), 'utf8').equals(stored)).toBe(true);
});

test('a thread that dies, or never answers, loses nothing: what it held is parsed on the calling thread', async () => {
  const { Worker } = await import('node:worker_threads');
  const errors: string[] = [];
  const logger = { error: (m: string) => errors.push(m) } as never;
  // Dies on its first message.
  const dying = parsePool(logger, { thread: () => new Worker('require("node:worker_threads").parentPort.on("message", () => process.exit(3))', { eval: true }) });
  const results = await Promise.all([1, 2, 3].map((i) => dying.parse('envelope', envelope(big(`held ${i}`)))));
  expect(results.map((r) => JSON.parse(r.events[0].summary!).g.title)).toEqual(['held 1', 'held 2', 'held 3']);
  expect(errors).toEqual([expect.stringMatching(/parser thread stopped/)]);
  // Then bodies are parsed inline for a while: no new thread per request.
  expect(JSON.parse((await dying.parse('envelope', envelope(big('after')))).events[0].summary!).g.title).toBe('after');
  expect(errors).toHaveLength(1);
});

test('a thread that cannot start: parsed on the calling thread, logged once', async () => {
  const errors: string[] = [];
  const pool = parsePool({ error: (m: string) => errors.push(m) } as never, { thread: () => { throw new Error('no threads here'); } });
  for (let i = 0; i < 3; i++) expect(JSON.parse((await pool.parse('store', Buffer.from(big(`n ${i}`)))).events[0].summary!).g.title).toBe(`n ${i}`);
  expect(errors).toEqual([expect.stringMatching(/could not start/)]);
});
