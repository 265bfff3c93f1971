import os from 'node:os';
import si from 'systeminformation';
import { MAX_DISKS, MAX_TEXT, clip, type WireDisk, type WireSample } from './wire';

/** Filesystem types that are not disks (memory, images, kernel views). */
const PSEUDO_FS = new Set([
  'tmpfs', 'devtmpfs', 'ramfs', 'squashfs', 'iso9660', 'udf', 'autofs', 'proc', 'sysfs', 'cgroup', 'cgroup2', 'nsfs',
  'devpts', 'mqueue', 'hugetlbfs', 'debugfs', 'tracefs', 'securityfs', 'pstore', 'bpf', 'configfs', 'fusectl',
  'efivarfs', 'fuse.lxcfs', 'binfmt_misc', 'rpc_pipefs', 'devfs', 'nullfs',
]);

interface CpuTimes { idle: number; total: number }

/** CPU time spent so far by every core, idle and in total (ms). */
function cpuTimes(): CpuTimes {
  let idle = 0;
  let total = 0;
  for (const c of os.cpus()) {
    idle += c.times.idle;
    total += c.times.idle + c.times.user + c.times.nice + c.times.sys + c.times.irq;
  }
  return { idle, total };
}

interface NetTotals { rx: number; tx: number; at: number }

/** Bytes received and sent so far by every interface but loopback. */
async function netTotals(): Promise<NetTotals | null> {
  try {
    const stats = await si.networkStats('*');
    let rx = 0;
    let tx = 0;
    for (const s of stats) {
      if (/^lo\d*$/.test(s.iface)) continue;
      rx += Number(s.rx_bytes) || 0;
      tx += Number(s.tx_bytes) || 0;
    }
    return { rx, tx, at: Date.now() };
  } catch {
    return null;
  }
}

/** `p`, or `fallback` when it takes longer than `ms` (a hung network mount must not stall every later sample). */
function within<T>(ms: number, p: Promise<T>, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => { timer = setTimeout(() => resolve(fallback), ms); timer.unref(); });
  return Promise.race([p.catch(() => fallback), late]).finally(() => clearTimeout(timer));
}

const pct = (part: number, whole: number) => (whole > 0 ? Math.min(Math.max((100 * part) / whole, 0), 100) : null);
const round2 = (n: number | null) => (n === null ? null : Math.round(n * 100) / 100);

/** The mounted filesystems worth watching, as `df` counts their use. */
async function disks(): Promise<WireDisk[]> {
  const seen = new Set<string>();
  const out: WireDisk[] = [];
  for (const f of await si.fsSize().catch(() => [])) {
    if (!f.mount || seen.has(f.mount) || PSEUDO_FS.has(String(f.type).toLowerCase()) || !(f.size > 0)) continue;
    seen.add(f.mount);
    const available = Number.isFinite(f.available) ? f.available : f.size - f.used;
    const percent = Number.isFinite(f.use) && f.use > 0 ? f.use : pct(f.used, f.used + available) ?? 0;
    out.push({ mount: clip(f.mount, MAX_TEXT.mount), filesystem: clip(f.fs ?? '', MAX_TEXT.filesystem), type: f.type ? clip(f.type, MAX_TEXT.type) : null, sizeBytes: f.size, usedBytes: f.used, percent: round2(percent)! });
    if (out.length >= MAX_DISKS) break;
  }
  return out;
}

/**
 * Takes samples of the machine it runs on: CPU and network counters are
 * differences since the previous sample (or since `prime`), the rest is
 * read as it stands.
 */
export class Sampler {
  private cpu = cpuTimes();
  private net: NetTotals | null = null;

  /** Starts the counters the first sample is measured from. */
  async prime(): Promise<void> {
    this.cpu = cpuTimes();
    this.net = await netTotals();
  }

  /** One sample, taken now. */
  async take(): Promise<WireSample> {
    const at = new Date();
    const [mem, fs, net] = await Promise.all([within(10_000, si.mem(), null), within(10_000, disks(), []), within(10_000, netTotals(), null)]);
    const cpu = cpuTimes();
    const busy = cpu.total - this.cpu.total;
    const cpuPercent = busy > 0 ? pct(busy - (cpu.idle - this.cpu.idle), busy) : null;
    this.cpu = cpu;

    let rx: number | null = null;
    let tx: number | null = null;
    let seconds = 0;
    if (net && this.net) {
      // A counter that went back (an interface gone, a reset) says nothing about this period.
      rx = net.rx >= this.net.rx ? net.rx - this.net.rx : null;
      tx = net.tx >= this.net.tx ? net.tx - this.net.tx : null;
      seconds = (net.at - this.net.at) / 1000;
    }
    this.net = net;

    const total = mem?.total ?? null;
    const available = mem ? (mem.available > 0 ? mem.available : mem.free + mem.buffcache) : null;
    const used = total !== null && available !== null ? total - available : null;
    const swapTotal = mem ? mem.swaptotal : null;
    const loads = process.platform === 'win32' ? null : os.loadavg();
    return {
      at: at.toISOString(),
      cpuPercent: round2(cpuPercent),
      memoryPercent: round2(used !== null && total ? pct(used, total) : null),
      memoryUsedBytes: used,
      memoryTotalBytes: total,
      swapPercent: round2(swapTotal ? pct(mem!.swapused, swapTotal) : null),
      swapUsedBytes: mem ? mem.swapused : null,
      swapTotalBytes: swapTotal,
      diskPercent: fs.length ? Math.max(...fs.map((d) => d.percent)) : null,
      disks: fs,
      load1: loads ? round2(loads[0]) : null,
      load5: loads ? round2(loads[1]) : null,
      load15: loads ? round2(loads[2]) : null,
      networkRxBytes: rx,
      networkTxBytes: tx,
      networkRxBytesPerSecond: rx !== null && seconds > 0 ? round2(rx / seconds) : null,
      networkTxBytesPerSecond: tx !== null && seconds > 0 ? round2(tx / seconds) : null,
    };
  }
}

/** How the agent names its machine's system: `Debian GNU/Linux 12 (linux 6.1.0-18-amd64, x64)`. */
export async function describeOs(): Promise<string> {
  try {
    const o = await si.osInfo();
    const name = [o.distro, o.release].filter(Boolean).join(' ') || o.platform;
    return `${name} (${o.platform} ${o.kernel}, ${o.arch})`.slice(0, 255);
  } catch {
    return `${os.type()} ${os.release()} (${os.arch()})`;
  }
}
