import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Schema } from '../lib/api';
import { formatDay, formatTime } from '../lib/format';

/** Mean response time per hour, drawn by uPlot in the page's colours, with a summary as its accessible name. */
export function ResponseChart({ graph }: { graph: Schema<'MonitorGraph'> }) {
  const box = useRef<HTMLDivElement>(null);
  const xs = graph.uptime.map((p) => new Date(p.at).getTime() / 1000);
  const ys = graph.uptime.map((p) => p.avgResponseTimeMs);
  const measured = ys.filter((y): y is number => y !== null);
  const label = measured.length
    ? `Response time over the last ${graph.hours} hours: mean ${Math.round(measured.reduce((a, b) => a + b, 0) / measured.length)} ms, highest ${Math.round(Math.max(...measured))} ms.`
    : `No response time measured in the last ${graph.hours} hours.`;
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const css = getComputedStyle(document.documentElement);
    const fg = css.getPropertyValue('--muted').trim() || '#6b7280';
    const line = css.getPropertyValue('--line').trim() || '#e5e7eb';
    const accent = css.getPropertyValue('--accent').trim() || '#2563eb';
    const axis = { stroke: fg, grid: { stroke: line }, ticks: { stroke: line } };
    const plot = new uPlot({
      width: el.clientWidth || 600, height: 220,
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true } },
      series: [{}, { label: 'ms', stroke: accent, width: 2, spanGaps: false, points: { size: 5, fill: accent } }],
      axes: [
        { ...axis, values: (_u: uPlot, ticks: number[]) => ticks.map((t) => (graph.hours > 24 ? formatDay(t * 1000) : formatTime(t * 1000))) },
        { ...axis, size: 60, values: (_u: uPlot, ticks: number[]) => ticks.map((t) => `${t} ms`) },
      ],
    }, [xs, ys as number[]], el);
    const resize = new ResizeObserver(() => plot.setSize({ width: el.clientWidth, height: 220 }));
    resize.observe(el);
    return () => { resize.disconnect(); plot.destroy(); };
  }, [graph]);
  return <div ref={box} className="chart" role="img" aria-label={label} />;
}
