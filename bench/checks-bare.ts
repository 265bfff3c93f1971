/**
 * Child process of `npm run bench:checks` (bench/checks.ts): the yardstick. A
 * bare Node client making fresh-connection (`agent: false`) GET requests to
 * the benchmark's loopback target, `concurrency` at a time, for `seconds`.
 * Receives `{ url, seconds, concurrency }` over IPC and answers `{ type:
 * 'bare', requests, cpu }` (cpu: this process's user + system seconds while
 * it ran), then exits. Vigil's cost per check is compared with `cpu / requests`.
 */
import http from 'node:http';

export interface BareResult { type: 'bare'; requests: number; cpu: number }

function once(url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    http.get(url, { agent: false }, (res) => { res.resume(); res.on('end', resolve); res.on('error', reject); }).on('error', reject);
  });
}

process.once('message', async (m: { url: string; seconds: number; concurrency: number }) => {
  const end = Date.now() + m.seconds * 1000;
  let requests = 0;
  const c0 = process.cpuUsage();
  const loop = async (k: number) => {
    for (let i = 0; Date.now() < end; i++) { await once(`${m.url}/bare/${k}/${i}`); requests++; }
  };
  await Promise.all(Array.from({ length: m.concurrency }, (_, k) => loop(k)));
  const c = process.cpuUsage(c0);
  process.send!({ type: 'bare', requests, cpu: (c.user + c.system) / 1e6 } satisfies BareResult, () => process.exit(0));
});
