import { bucketTimeLabels } from '../../lib/bucket-labels.ts';
import { formatCount, formatDateTime, formatNumber } from '../../lib/format.ts';
import { linePath } from '../../lib/scale.ts';
import { Axes, HoverReadout, MARGIN, pointedIndex, timePlot, useReadout } from './Axes.tsx';
import { ChartFigure } from './ChartFigure.tsx';

export interface TrafficChartProps {
  title: string;
  times: number[];
  beesIn: number[];
  beesOut: number[];
  netFlow: number[];
  bucketMs: number;
  from: number;
  to: number;
}

function describe({ times, beesIn, beesOut, netFlow, from, to }: TrafficChartProps): string {
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  let busiest = 0;
  beesIn.forEach((v, i) => {
    if (v + (beesOut[i] ?? 0) > (beesIn[busiest] ?? 0) + (beesOut[busiest] ?? 0)) busiest = i;
  });
  const busiestAt = times[busiest];
  return (
    `Bees in ${formatCount(sum(beesIn))}, out ${formatCount(sum(beesOut))}, net ${formatCount(sum(netFlow), true)} ` +
    `from ${formatDateTime(from)} to ${formatDateTime(to)}.` +
    (busiestAt === undefined ? '' : ` Busiest interval ${formatDateTime(busiestAt)}: ${formatCount(beesIn[busiest])} in, ${formatCount(beesOut[busiest])} out.`)
  );
}

/** Bees in as bars above the axis, bees out below it, and the net flow as a line: one glance shows the balance. */
export function TrafficChart(props: TrafficChartProps) {
  const { title, times, beesIn, beesOut, netFlow, bucketMs, from, to } = props;
  const readout = useReadout();
  const hover = readout.index;
  const empty = times.length === 0;
  return (
    <ChartFigure
      title={title}
      legend={[
        { label: 'In', className: 'series-in', shape: 'bar' },
        { label: 'Out', className: 'series-out', shape: 'bar' },
        { label: 'Net', className: 'series-net', shape: 'line' },
      ]}
      times={times}
      columns={[
        { label: 'In', value: (row) => formatCount(beesIn[row]) },
        { label: 'Out', value: (row) => formatCount(beesOut[row]) },
        { label: 'Net', value: (row) => formatCount(netFlow[row], true) },
      ]}
      empty={empty}
      emptyText="No entrance traffic in this range."
    >
      {(width, ids) => {
        const top = Math.max(1, ...beesIn, ...netFlow);
        const bottom = Math.min(0, ...beesOut.map((v) => -v), ...netFlow);
        const { height, x, y, xAxis, yAxis } = timePlot(width, from, to, bottom, top, { integer: true });
        const slot = Math.max(1, x(from + bucketMs) - x(from));
        const barWidth = Math.max(1, slot * 0.8);
        const zero = y(0);
        const hoverT = hover === undefined ? undefined : times[hover];
        return (
          <svg
            width={width}
            height={height}
            viewBox={`0 0 ${width} ${height}`}
            role="img"
            aria-labelledby={`${ids.title} ${ids.desc}`}
            {...readout.handlers((event) => pointedIndex(event, width, from, to, times, bucketMs / 2))}
          >
            <title id={ids.title}>{title}</title>
            <desc id={ids.desc}>{describe(props)}</desc>
            <Axes x={x} y={y} xTicks={xAxis.ticks} xStep={xAxis.step} yTicks={yAxis.ticks} yLabel={(v) => formatNumber(Math.abs(v), 3)} width={width} height={height} />
            <g class="series series-in" aria-hidden="true">
              {times.map((t, i) => {
                const value = beesIn[i] ?? 0;
                return value > 0 ? <rect key={t} class="bar" x={x(t) + (slot - barWidth) / 2} y={y(value)} width={barWidth} height={zero - y(value)} /> : null;
              })}
            </g>
            <g class="series series-out" aria-hidden="true">
              {times.map((t, i) => {
                const value = beesOut[i] ?? 0;
                return value > 0 ? <rect key={t} class="bar" x={x(t) + (slot - barWidth) / 2} y={zero} width={barWidth} height={y(-value) - zero} /> : null;
              })}
            </g>
            <line class="zero" x1={MARGIN.left} x2={width - MARGIN.right} y1={zero} y2={zero} aria-hidden="true" />
            <g class="series series-net" aria-hidden="true">
              <path
                class="line"
                d={linePath(
                  times.map((t, i) => ({ t: t + bucketMs / 2, v: netFlow[i] ?? null })),
                  x,
                  y,
                  bucketMs * 1.5,
                )}
              />
            </g>
            <text class="axis-note" x={MARGIN.left + 4} y={MARGIN.top + 10} aria-hidden="true">
              ↑ bees in
            </text>
            <text class="axis-note" x={MARGIN.left + 4} y={height - MARGIN.bottom - 5} aria-hidden="true">
              ↓ bees out
            </text>
            {hover !== undefined && hoverT !== undefined && (
              <HoverReadout
                xPos={x(hoverT + bucketMs / 2)}
                width={width}
                height={height}
                lines={[
                  { text: bucketTimeLabels(times, formatDateTime)[hover]! },
                  { text: `In: ${formatCount(beesIn[hover])}`, className: 'series-in' },
                  { text: `Out: ${formatCount(beesOut[hover])}`, className: 'series-out' },
                  { text: `Net: ${formatCount(netFlow[hover], true)}`, className: 'series-net' },
                ]}
              />
            )}
          </svg>
        );
      }}
    </ChartFigure>
  );
}
