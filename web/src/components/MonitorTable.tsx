import { useRef } from 'react';
import { useVirtualizer } from '@tanstack/react-virtual';
import { Link } from 'react-router';
import type { Schema } from '../lib/api';
import { StatusBadge } from './StatusBadge';
import { formatPercent } from '../lib/format';
import { KIND_LABELS } from './MonitorFilters';

type Monitor = Schema<'Monitor'>;
const ROW_PX = 48;

/**
 * The monitors as a table of which only the rows in view exist in the page
 * (TanStack Virtual), so 10,000 scroll as smoothly as 10. Rows keep their
 * place in the whole (aria-rowindex) for screen readers.
 */
export function MonitorTable({ monitors, selectable, selected, onSelect }: {
  monitors: Monitor[]; selectable: boolean; selected: Set<string>; onSelect: (s: Set<string>) => void;
}) {
  const scroller = useRef<HTMLDivElement>(null);
  const rows = useVirtualizer({ count: monitors.length, getScrollElement: () => scroller.current, estimateSize: () => ROW_PX, overscan: 10 });
  const toggle = (id: string) => {
    const next = new Set(selected);
    if (next.has(id)) next.delete(id); else next.add(id);
    onSelect(next);
  };
  const allSelected = selected.size > 0 && monitors.every((m) => selected.has(m.id));
  return (
    <div role="table" aria-label="Monitors" aria-rowcount={monitors.length + 1} className="list">
      <div role="rowgroup">
        <div role="row" aria-rowindex={1}>
          <span role="columnheader">
            {selectable && <input type="checkbox" aria-label="Select all shown monitors" checked={allSelected}
              onChange={() => onSelect(allSelected ? new Set() : new Set(monitors.map((m) => m.id)))} />}
          </span>
          <span role="columnheader">Name</span>
          <span role="columnheader">Status</span>
          <span role="columnheader" className="wide">Workspace</span>
          <span role="columnheader" className="wide">Uptime 24 h</span>
        </div>
      </div>
      <div role="rowgroup" ref={scroller} className="scroller">
        <div className="sizer" ref={(el) => { if (el) el.style.height = `${rows.getTotalSize()}px`; }}>
          {rows.getVirtualItems().map((v) => {
            const m = monitors[v.index]!;
            return (
              <div role="row" key={m.id} aria-rowindex={v.index + 2} className="vrow" ref={(el) => { if (el) el.style.transform = `translateY(${v.start}px)`; }}>
                <span role="cell">
                  {selectable && <input type="checkbox" aria-label={`Select ${m.name}`} checked={selected.has(m.id)} onChange={() => toggle(m.id)} />}
                </span>
                <span role="cell" className="name"><Link to={`/monitors/${m.id}`}>{m.name}</Link> <span className="muted small">{KIND_LABELS[m.kind]}</span></span>
                <span role="cell"><StatusBadge status={m.status} /></span>
                <span role="cell" className="wide name">{m.workspace.name}</span>
                <span role="cell" className="wide">{formatPercent(m.uptime24h)}</span>
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
