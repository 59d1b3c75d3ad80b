import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { formatNumber, formatTimeTick } from '../../lib/format.ts';
import { linearScale, nearestIndex, niceTicks, timeTicks, type LinearScale } from '../../lib/scale.ts';

export const MARGIN = { top: 12, right: 14, bottom: 26, left: 46 };
const CHART_HEIGHT = 220;

/** Scales and ticks of a chart `width` wide over time `from`–`to` whose values span `low`–`high`. */
export function timePlot(width: number, from: number, to: number, low: number, high: number, options: { integer?: boolean } = {}) {
  const height = CHART_HEIGHT;
  const yAxis = niceTicks(low, high, 4, options);
  const x = linearScale([from, to], [MARGIN.left, width - MARGIN.right]);
  const y = linearScale([yAxis.min, yAxis.max], [height - MARGIN.bottom, MARGIN.top]);
  // About one time label per 70 px, so the labels do not crowd each other.
  const xAxis = timeTicks(from, to, Math.max(2, Math.floor((width - MARGIN.left - MARGIN.right) / 70)));
  return { height, x, y, xAxis, yAxis };
}

/**
 * The index in `times` nearest the pointer over a chart drawn by `timePlot`, or undefined when there is none.
 * `offsetMs` is where within its interval a value is drawn (half an interval for bars).
 */
export function pointedIndex(event: PointerEvent, width: number, from: number, to: number, times: readonly number[], offsetMs = 0): number | undefined {
  const box = (event.currentTarget as SVGSVGElement).getBoundingClientRect();
  const t = from + ((event.clientX - box.left - MARGIN.left) / (width - MARGIN.left - MARGIN.right)) * (to - from) - offsetMs;
  const index = nearestIndex(times.map((time) => ({ t: time })), t);
  return index < 0 ? undefined : index;
}

/**
 * A chart's read-out: the index of the value it shows, and the pointer handlers of the chart's SVG. It follows a
 * mouse or pen as it moves, and shows where a finger taps (a tap sends no pointermove). A finger lifted also leaves
 * the chart, so only a mouse or pen leaving hides the read-out; a tapped one stays until a tap or click outside the
 * chart, or Escape.
 */
export function useReadout() {
  const [index, setIndex] = useState<number | undefined>();
  const chart = useRef<SVGSVGElement>(null);
  const shown = index !== undefined;
  // A layout effect: listening from the moment the read-out is drawn. With a plain effect, which runs after the next
  // paint, an Escape pressed as the read-out appeared was missed on a busy phone.
  useLayoutEffect(() => {
    if (!shown) return;
    const pointerDown = (event: PointerEvent) => {
      if (!(event.target instanceof Node && chart.current?.contains(event.target))) setIndex(undefined);
    };
    const keyDown = (event: KeyboardEvent) => {
      if (event.key === 'Escape') setIndex(undefined);
    };
    // Capturing, so a control that stops the event on its way up still hides the read-out.
    document.addEventListener('pointerdown', pointerDown, true);
    document.addEventListener('keydown', keyDown);
    return () => {
      document.removeEventListener('pointerdown', pointerDown, true);
      document.removeEventListener('keydown', keyDown);
    };
  }, [shown]);
  const handlers = (pick: (event: PointerEvent) => number | undefined) => {
    const point = (event: PointerEvent) => setIndex(pick(event));
    return {
      ref: chart,
      onPointerDown: point,
      onPointerMove: point,
      onPointerLeave: (event: PointerEvent) => {
        if (event.pointerType !== 'touch') setIndex(undefined);
      },
    };
  };
  return { index, handlers };
}

/** Grid lines and labels; decorative for assistive technology, which reads the chart's description and table. */
export function Axes({
  x,
  y,
  xTicks,
  xStep,
  yTicks,
  yLabel = (v) => formatNumber(v, 3),
  width,
  height,
}: {
  x: LinearScale;
  y: LinearScale;
  xTicks: number[];
  xStep: number;
  yTicks: number[];
  yLabel?: (value: number) => string;
  width: number;
  height: number;
}) {
  const left = MARGIN.left;
  const right = width - MARGIN.right;
  const bottom = height - MARGIN.bottom;
  return (
    <g class="axes" aria-hidden="true">
      {yTicks.map((tick) => (
        <g key={`y${tick}`}>
          <line class="grid" x1={left} x2={right} y1={y(tick)} y2={y(tick)} />
          <text class="tick-label" x={left - 6} y={y(tick)} dy="0.32em" text-anchor="end">
            {yLabel(tick)}
          </text>
        </g>
      ))}
      {xTicks.map((tick) => (
        <g key={`x${tick}`}>
          <line class="tick" x1={x(tick)} x2={x(tick)} y1={bottom} y2={bottom + 4} />
          <text class="tick-label" x={x(tick)} y={bottom + 16} text-anchor="middle">
            {formatTimeTick(tick, xStep)}
          </text>
        </g>
      ))}
      <line class="axis" x1={left} x2={right} y1={bottom} y2={bottom} />
    </g>
  );
}

/** The hover read-out: a vertical rule and a small box with the values of the nearest interval. */
export function HoverReadout({ xPos, lines, width, height }: { xPos: number; lines: { text: string; className?: string }[]; width: number; height: number }) {
  const boxWidth = Math.max(...lines.map((l) => l.text.length)) * 6.6 + 14;
  const boxHeight = lines.length * 16 + 8;
  const onRight = xPos + 10 + boxWidth <= width - MARGIN.right;
  const boxX = onRight ? xPos + 10 : xPos - 10 - boxWidth;
  return (
    <g class="hover" aria-hidden="true" pointer-events="none">
      <line class="hover-rule" x1={xPos} x2={xPos} y1={MARGIN.top} y2={height - MARGIN.bottom} />
      <rect class="hover-box" x={boxX} y={MARGIN.top} width={boxWidth} height={boxHeight} rx="4" />
      {lines.map((line, i) => (
        <text key={i} class={`hover-text ${line.className ?? ''}`} x={boxX + 7} y={MARGIN.top + 17 + i * 16}>
          {line.text}
        </text>
      ))}
    </g>
  );
}
