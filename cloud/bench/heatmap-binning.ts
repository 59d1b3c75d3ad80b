// Throughput of binTrajectories against a baseline that only reads the same points, both measured in
// this run on this machine. Goal: at least 1 M trajectory points per second on one core.
import { binTrajectories, DEFAULT_GRID } from '../src/heatmaps/grid.ts';

const FRAME = { width: 640, height: 480 };
const TRACKS = 4000;
const POINTS_PER_TRACK = 50;
const RUNS = 15;
const GOAL_POINTS_PER_SECOND = 1_000_000;

/** Bees walking in from the entrance at 2–8 px/frame, one in five darting at up to 60 px/frame. */
function syntheticTracks(): number[][][] {
  let seed = 2024;
  const random = (): number => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const tracks: number[][][] = [];
  for (let t = 0; t < TRACKS; t += 1) {
    const fast = random() < 0.2;
    const speed = fast ? 20 + random() * 40 : 2 + random() * 6;
    let x = random() * FRAME.width;
    let y = FRAME.height - random() * 40;
    let heading = -Math.PI / 2 + (random() - 0.5) * 1.5;
    const track: number[][] = [];
    for (let i = 0; i < POINTS_PER_TRACK; i += 1) {
      track.push([x, y]);
      heading += (random() - 0.5) * 0.6;
      x = Math.min(FRAME.width, Math.max(0, x + Math.cos(heading) * speed));
      y = Math.min(FRAME.height, Math.max(0, y + Math.sin(heading) * speed));
    }
    tracks.push(track);
  }
  return tracks;
}

/** Touches every coordinate once: the floor any binning of these arrays has to pay. */
function readPoints(tracks: number[][][]): number {
  let sum = 0;
  for (let t = 0; t < tracks.length; t += 1) {
    const track = tracks[t]!;
    for (let i = 0; i < track.length; i += 1) {
      const point = track[i]!;
      sum += point[0]! + point[1]!;
    }
  }
  return sum;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const tracks = syntheticTracks();
const points = TRACKS * POINTS_PER_TRACK;
let sink = 0;

// Warm both paths up so the JIT has compiled them before timing.
for (let i = 0; i < 5; i += 1) {
  sink += readPoints(tracks);
  sink += binTrajectories(tracks, FRAME, DEFAULT_GRID).cells.size;
}

const baselineSeconds: number[] = [];
const binningSeconds: number[] = [];
let cellsTouched = 0;
// Interleaved so machine noise hits both alike.
for (let run = 0; run < RUNS; run += 1) {
  let start = process.hrtime.bigint();
  sink += readPoints(tracks);
  baselineSeconds.push(Number(process.hrtime.bigint() - start) / 1e9);

  start = process.hrtime.bigint();
  const result = binTrajectories(tracks, FRAME, DEFAULT_GRID);
  binningSeconds.push(Number(process.hrtime.bigint() - start) / 1e9);
  cellsTouched = result.cells.size;
  sink += result.segments;
}

const baselineRate = points / median(baselineSeconds);
const binningRate = points / median(binningSeconds);
const millions = (rate: number): string => `${(rate / 1e6).toFixed(1)} M points/s`;

console.log(
  `heatmap binning: ${TRACKS} tracks × ${POINTS_PER_TRACK} points, frame ${FRAME.width}×${FRAME.height}, ` +
    `grid ${DEFAULT_GRID.cols}×${DEFAULT_GRID.rows}, median of ${RUNS} runs (${cellsTouched} cells touched)`,
);
console.log(`baseline (read points, sum coordinates): ${millions(baselineRate)}`);
console.log(`binTrajectories:                         ${millions(binningRate)}`);
console.log(
  `ratio binning / baseline: ${(binningRate / baselineRate).toFixed(3)} ` +
    `(binning costs ${(baselineRate / binningRate).toFixed(1)}× the time of reading the points)`,
);
console.log(
  `goal ≥ ${millions(GOAL_POINTS_PER_SECOND)}: ${binningRate >= GOAL_POINTS_PER_SECOND ? 'met' : 'NOT met'}` +
    ` (checksum ${sink.toFixed(0)})`,
);
