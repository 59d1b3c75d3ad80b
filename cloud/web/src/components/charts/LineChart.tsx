import { bucketTimeLabels } from '../../lib/bucket-labels.ts';
import { formatDateTime, formatNumber } from '../../lib/format.ts';
import { isolatedPoints, linePath, type Point } from '../../lib/scale.ts';
import { Axes, HoverReadout, pointedIndex, timePlot, useReadout } from './Axes.tsx';
import { ChartFigure } from './ChartFigure.tsx';

export interface LineSeries {
  key: string;
  label: string;
  /** Colour class (series-temp, …); the second series of a chart is dashed so colour is not the only cue. */
  className: string;
  dashed?: boolean;
}

export interface LineChartProps {
  title: string;
  unit: string;
  series: LineSeries[];
  /** Sorted by time; a missing value is null. */
  times: number[];
  values: Record<string, (number | null)[]>;
  from: number;
  to: number;
  /** Lines break across gaps longer than this (a silent sensor is not interpolated). */
  maxGapMs: number;
  decimals?: number;
  /** The value axis starts at 0: for quantities read against none (a speed), where a cut axis makes a small change look large. */
  fromZero?: boolean;
}

function describe(props: LineChartProps): string {
  const parts = props.series.map((s) => {
    const present = (props.values[s.key] ?? []).filter((v): v is number => v !== null && Number.isFinite(v));
    if (present.length === 0) return `${s.label}: no readings`;
    const min = Math.min(...present);
    const max = Math.max(...present);
    const latest = present[present.length - 1]!;
    const f = (v: number) => `${formatNumber(v, props.decimals ?? 1)} ${props.unit}`;
    return `${s.label}: latest ${f(latest)}, lowest ${f(min)}, highest ${f(max)}`;
  });
  return `${parts.join('. ')}. From ${formatDateTime(props.from)} to ${formatDateTime(props.to)}.`;
}

export function LineChart(props: LineChartProps) {
  const { title, unit, series, times, values, from, to, maxGapMs, decimals = 1, fromZero = false } = props;
  const readout = useReadout();
  const hover = readout.index;
  const all = series.flatMap((s) => values[s.key] ?? []).filter((v): v is number => v !== null && Number.isFinite(v));
  const empty = all.length === 0;
  const fmt = (v: number | null | undefined) => (v === null || v === undefined ? '—' : formatNumber(v, decimals));

  return (
    <ChartFigure
      title={`${title} (${unit})`}
      legend={series.map((s) => ({ label: s.label, className: s.className, shape: s.dashed ? 'dashed' : 'line' }))}
      times={times}
      columns={series.map((s) => ({ label: `${s.label} (${unit})`, value: (row) => fmt(values[s.key]?.[row]) }))}
      empty={empty}
    >
      {(width, ids) => {
        const { height, x, y, xAxis, yAxis } = timePlot(width, from, to, fromZero ? Math.min(0, ...all) : Math.min(...all), Math.max(...all));
        const seriesPoints = series.map((s) => ({ s, points: times.map((t, i): Point => ({ t, v: values[s.key]?.[i] ?? null })) }));
        const hoverT = hover === undefined ? undefined : times[hover];
        return (
          <svg
            width={width}
            height={height}
            viewBox={`0 0 ${width} ${height}`}
            role="img"
            aria-labelledby={`${ids.title} ${ids.desc}`}
            {...readout.handlers((event) => pointedIndex(event, width, from, to, times))}
          >
            <title id={ids.title}>{`${title} (${unit})`}</title>
            <desc id={ids.desc}>{describe(props)}</desc>
            <Axes x={x} y={y} xTicks={xAxis.ticks} xStep={xAxis.step} yTicks={yAxis.ticks} width={width} height={height} />
            {seriesPoints.map(({ s, points }) => (
              <g key={s.key} class={`series ${s.className}`} aria-hidden="true">
                <path class={`line${s.dashed ? ' dashed' : ''}`} d={linePath(points, x, y, maxGapMs)} />
                {isolatedPoints(points, maxGapMs).map((p) => (
                  <circle key={p.t} class="dot" cx={x(p.t)} cy={y(p.v)} r="2.5" />
                ))}
              </g>
            ))}
            {hover !== undefined && hoverT !== undefined && (
              <HoverReadout
                xPos={x(hoverT)}
                width={width}
                height={height}
                lines={[
                  { text: bucketTimeLabels(times, formatDateTime)[hover]! },
                  ...series.map((s) => ({ text: `${s.label}: ${fmt(values[s.key]?.[hover])} ${unit}`, className: s.className })),
                ]}
              />
            )}
          </svg>
        );
      }}
    </ChartFigure>
  );
}
