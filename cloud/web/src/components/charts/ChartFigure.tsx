import type { ComponentChildren } from 'preact';
import { useId, useRef, useState } from 'preact/hooks';
import { useElementWidth } from '../../hooks.ts';
import { bucketTimeLabels } from '../../lib/bucket-labels.ts';
import { formatDateTime } from '../../lib/format.ts';

export interface LegendItem {
  label: string;
  /** CSS class giving the swatch its colour (series-in, series-temp, …). */
  className: string;
  shape: 'line' | 'bar' | 'dashed';
}

export interface TableColumn {
  label: string;
  value: (row: number) => string;
}

export interface ChartFigureProps {
  title: string;
  legend: LegendItem[];
  /** Rows of the data table: the time of each, and the columns after the time. */
  times: number[];
  columns: TableColumn[];
  empty: boolean;
  emptyText?: string;
  children: (width: number, ids: { title: string; desc: string }) => ComponentChildren;
}

/**
 * The frame around every chart: heading and legend, the SVG at the container's pixel width, and a toggle that shows
 * the same numbers as a table (for screen readers, and for anyone who wants exact values).
 */
export function ChartFigure({ title, legend, times, columns, empty, emptyText = 'No readings in this range.', children }: ChartFigureProps) {
  const container = useRef<HTMLDivElement>(null);
  const width = useElementWidth(container);
  const [showTable, setShowTable] = useState(false);
  const base = useId();
  const ids = { title: `${base}-title`, desc: `${base}-desc` };
  const tableId = `${base}-table`;
  return (
    // Named by its title alone: the whole caption made every chart's name end in "Legend".
    <figure class="chart" aria-labelledby={`${base}-name`}>
      <figcaption class="chart-head">
        <h3 class="chart-title" id={`${base}-name`}>
          {title}
        </h3>
        {!empty && (
          <ul class="legend" aria-label="Legend">
            {legend.map((item) => (
              <li key={item.label}>
                <span class={`swatch swatch-${item.shape} ${item.className}`} aria-hidden="true" />
                {item.label}
              </li>
            ))}
          </ul>
        )}
      </figcaption>
      <div class="chart-canvas" ref={container}>
        {empty ? <p class="chart-empty">{emptyText}</p> : children(width, ids)}
      </div>
      {!empty && (
        <div class="chart-foot">
          <button type="button" class="link-button" aria-expanded={showTable} aria-controls={tableId} onClick={() => setShowTable((v) => !v)}>
            {/* The chart's title, heard and not seen: every chart's button was "Show data table", five alike on a hive page. */}
            {showTable ? 'Hide data table' : 'Show data table'} <span class="visually-hidden">of {title}</span>
          </button>
        </div>
      )}
      <div id={tableId} hidden={!showTable || empty}>
        {showTable && !empty && (
          <div class="table-wrap" role="region" aria-label={`${title}: data`} tabIndex={0}>
            <table class="data-table">
              <caption class="visually-hidden">{title}</caption>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  {columns.map((c) => (
                    <th scope="col" key={c.label}>
                      {c.label}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {bucketTimeLabels(times, formatDateTime).map((label, row) => (
                  <tr key={times[row]}>
                    <th scope="row">{label}</th>
                    {columns.map((c) => (
                      <td key={c.label}>{c.value(row)}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </div>
    </figure>
  );
}
