import os from 'node:os';
import { parseArgs } from 'node:util';
import { Outbox } from './outbox';
import { describeOs, Sampler } from './sampler';
import { MAX_TEXT, REPORT_PATH, clip, type AgentReport, type ReportAnswer, type WireSample } from './wire';

/** The agent program's version, reported to the server. */
export const AGENT_VERSION = '0.1.0';

/** Samples per report: a backlog goes in several. */
const CHUNK = 200;

/** The server refused the token (unknown, or the agent was deleted): the agent stops. */
export class TokenRefused extends Error {}

export interface AgentOptions {
  server: string;
  token: string;
  /** Seconds between samples (default 30). */
  intervalSeconds?: number;
  /** Samples kept at most while the server is away (default 2880: a day at 30 s). */
  bufferSize?: number;
  /** How long one report may take (default 15 s). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Where the agent says what happens (default: stderr). */
  log?: (line: string) => void;
}

const sleep = (ms: number, signal?: AbortSignal) => new Promise<void>((resolve) => {
  if (signal?.aborted) return resolve();
  const t = setTimeout(done, ms);
  function done() { clearTimeout(t); signal?.removeEventListener('abort', done); resolve(); }
  signal?.addEventListener('abort', done, { once: true });
});

/**
 * Runs the agent until `signal` aborts: a sample of this machine every
 * `intervalSeconds` (the first after one second), each delivered with
 * whatever earlier samples the server has not taken yet. When the server is
 * away (no answer, 5xx, 429) the samples wait in a bounded outbox and go at
 * the next tick after it answers again; a 400 drops the refused samples; a
 * 401 or 403 (the token is unknown or the agent was deleted) stops the agent
 * with `TokenRefused`.
 */
export async function runAgent(o: AgentOptions): Promise<void> {
  const url = `${o.server.replace(/\/+$/, '')}${REPORT_PATH}`;
  const interval = o.intervalSeconds ?? 30;
  const log = o.log ?? ((line: string) => process.stderr.write(`agent: ${line}\n`));
  const outbox = new Outbox(o.bufferSize ?? 2880);
  const sampler = new Sampler();
  const identity = { hostname: clip(os.hostname(), MAX_TEXT.hostname), os: clip(await describeOs(), MAX_TEXT.os), version: AGENT_VERSION, intervalSeconds: interval };
  let away = false;
  let chunk = CHUNK;

  /** Posts one report; what the server said, or null when it did not answer usefully. */
  const post = async (samples: WireSample[]): Promise<{ status: number; text: string } | null> => {
    const report: AgentReport = { ...identity, sentAt: new Date().toISOString(), samples };
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${o.token}`, 'content-type': 'application/json', 'user-agent': `vigil-agent/${AGENT_VERSION}` },
        body: JSON.stringify(report),
        signal: AbortSignal.timeout(o.timeoutMs ?? 15_000),
      });
      return { status: res.status, text: await res.text() };
    } catch (e) {
      if (!away) log(`server unreachable (${(e as Error).message}); keeping samples (at most ${outbox.capacity})`);
      return null;
    }
  };

  /** Delivers the outbox, oldest first, until it is empty or the server stops taking. */
  const deliver = async () => {
    while (outbox.size > 0) {
      const batch = outbox.peek(chunk);
      const res = await post(batch);
      if (!res) { away = true; return; }
      if (res.status === 200) {
        outbox.remove(batch);
        if (away) log(`server back; delivered the samples kept meanwhile (${outbox.dropped} dropped for room so far)`);
        away = false;
        let answer: Partial<ReportAnswer> = {};
        try { answer = JSON.parse(res.text) as Partial<ReportAnswer>; } catch { /* a proxy's own 200: nothing to say */ }
        if (answer.dropped) log(`the server dropped ${answer.dropped} samples too far from its clock`);
        continue;
      }
      if (res.status === 401 || res.status === 403) throw new TokenRefused(`the server refused this agent token (HTTP ${res.status}): enrol the agent again`);
      if (res.status === 413 && chunk > 1) { chunk = Math.max(1, Math.floor(chunk / 2)); continue; }
      if (res.status === 400 || res.status === 413) {
        // Never deliverable as they are: retrying would hold back every later sample.
        log(`the server refused ${batch.length} samples (HTTP ${res.status}): ${res.text.slice(0, 300)}`);
        outbox.remove(batch);
        continue;
      }
      if (!away) log(`server answered HTTP ${res.status}; keeping samples (at most ${outbox.capacity})`);
      away = true;
      return;
    }
  };

  // One delivery at a time, apart from sampling: a server that hangs delays reports, never samples.
  let delivering: Promise<void> | null = null;
  let refused: TokenRefused | null = null;
  const halt = new AbortController();
  const asleep = o.signal ? AbortSignal.any([o.signal, halt.signal]) : halt.signal;
  const startDelivery = () => {
    if (delivering) return;
    delivering = deliver().catch((e: unknown) => {
      if (e instanceof TokenRefused) { refused = e; halt.abort(); }
      else log(`delivering failed: ${(e as Error).message}`);
    }).finally(() => { delivering = null; });
  };

  await sampler.prime();
  await sleep(Math.min(1000, interval * 1000), asleep);
  let next = Date.now();
  while (!o.signal?.aborted && !refused) {
    try {
      outbox.push(await sampler.take());
    } catch (e) {
      log(`sampling failed: ${(e as Error).message}`);
    }
    startDelivery();
    // At a fixed rate; a tick that ran long skips the ticks it missed.
    next += interval * 1000;
    if (next < Date.now()) next = Date.now() + interval * 1000;
    await sleep(next - Date.now(), asleep);
  }
  if (refused) throw refused;
  await delivering;
  if (refused) throw refused;
}

function usage(): never {
  process.stderr.write('Usage: npm run agent -- --server URL --token TOKEN [--interval SECONDS] [--buffer SAMPLES]\n'
    + '(the token may instead be in VIGIL_AGENT_TOKEN)\n');
  process.exit(2);
}

if (require.main === module) {
  const { values } = parseArgs({ options: { server: { type: 'string' }, token: { type: 'string' }, interval: { type: 'string' }, buffer: { type: 'string' } } });
  const token = values.token ?? process.env.VIGIL_AGENT_TOKEN;
  const interval = values.interval === undefined ? 30 : Number(values.interval);
  const buffer = values.buffer === undefined ? 2880 : Number(values.buffer);
  if (!values.server || !token || !Number.isFinite(interval) || interval < 1 || interval > 3600 || !Number.isInteger(buffer) || buffer < 1) usage();
  const stop = new AbortController();
  process.on('SIGINT', () => stop.abort());
  process.on('SIGTERM', () => stop.abort());
  process.stderr.write(`agent: reporting to ${values.server} every ${interval} s as ${os.hostname()}\n`);
  runAgent({ server: values.server, token, intervalSeconds: interval, bufferSize: buffer, signal: stop.signal })
    .then(() => process.exit(0), (e: unknown) => {
      process.stderr.write(`agent stopped: ${(e as Error).message}\n`);
      process.exit(e instanceof TokenRefused ? 3 : 1);
    });
}
