// Tracker and counter tuning without the detector's cost: runs the detector once per clip and model (cached next
// to the clip), then replays those detections through the tracker and counting rules with the settings given,
// and scores them like the accuracy benchmark. With --explain it lists every true crossing the agent missed or
// invented, with what the tracker made of that bee; with --identities, where each true bee's frames went that its
// main track did not hold (missed, or on other tracks), by role. Tune on training scenes; score held-out ones with
// `pnpm bench:accuracy`.
// `--seeds N` replays N clips of each scenario (see bench:accuracy). `--model FILE` follows the agent's rule: a model
// named without a slot model runs alone, so compare it with the default pair only when `--detector` names the slot
// model too (a path from `agent/` or an absolute one; `--model` is resolved from where pnpm was started).
// `--arrival-delay MS [--arrival-stamps]` makes every frame arrive up to MS ms late, as a live camera's frames do while the
// agent works on the one before, and stamps them as the live capture does (or at arrival, as it did before).
// `--drop-every N` loses every Nth frame before detection, as a live camera loses the frames an agent too slow for
// it has no time for, and scores the frames the agent saw. `--fps N` reads every clip at N frames/s, as an agent with
// `source.fps` N does (see bench:accuracy); a clip already at N reuses the detections cached for its own rate.
//   pnpm --filter @hivegate/agent bench:tracking [-- --split train --tracker '{"lostGateLengths":1.5}' --detector '{"motionGate":false}' --kind onnx|motion --seeds N --fps N --explain]
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { signedDistanceToPolygon, type Crossing, type EntranceMovementInput, type Point } from '@hivegate/shared';
import { hashString, hashUnit, type GroundTruth } from '@hivegate/simulator';
import { createCapture, createTracking, followPictureRate } from '../src/agent.ts';
import { RepeatedFrameFilter } from '../src/capture/repeated-frames.ts';
import { sourceFrameAt } from '../src/capture/resample.ts';
import { StreamClock } from '../src/capture/stream-clock.ts';
import { createDetector } from '../src/detect/factory.ts';
import { insideArea, type Detection } from '../src/detect/types.ts';
import { compareIntervals } from '../src/eval/intervals.ts';
import { DetectionAccumulator, matchByDistance, MotAccumulator } from '../src/eval/mot.ts';
import { agentConfigFor, cachedClip, clipSetLabel, gateFor, inClipUnits, type CachedClip } from './clips.ts';
import { readTrackingOptions } from './tracking-options.ts';

const {
  seconds, seeds, scenarios: names, model, kind, detectorOverrides, trackerOverrides, countingOverrides, threshold: thresholdOption,
  cacheDir, explain: explainMisses, identities, traced, dropEvery, agentFps, arrivalDelayMs, arrivalStamps,
} = readTrackingOptions(process.argv.slice(2), process.env.INIT_CWD ?? process.cwd());

interface FrameDetections {
  timestampMs: number;
  /** [x, y, w, h, score] per detection, then [dx, dy] from a model that reports movement. */
  detections: number[][];
  /** [left, right, top, bottom] of the part the detector looked at, when not the whole frame. */
  looked?: number[];
  /** Lost before detection (--drop-every): neither the detector nor the tracker saw it. */
  dropped?: true;
  /** A repeat of the frame before (a clip slower than --fps), which the pipeline skips. */
  repeated?: true;
}

/** Digest of the detection code (`src/detect`, tests aside), read once per run. */
const DETECTION_CODE = (() => {
  const dir = fileURLToPath(new URL('../src/detect/', import.meta.url));
  const hash = createHash('sha256');
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.ts') && !n.endsWith('.test.ts')).sort()) hash.update(readFileSync(join(dir, name)));
  return hash.digest();
})();

/** Peaks below this are not cached; a replay can use any threshold above it (peak finding ignores the threshold). */
const CACHED_THRESHOLD = 0.1;

/** Runs capture and detector over the clip once; later runs with the same model file and detector settings read the cached result. */
async function detectionsFor(clip: CachedClip): Promise<FrameDetections[]> {
  const config = agentConfigFor(clip, { detector: kind, model, detectorOverrides, fps: agentFps });
  config.detector.scoreThreshold = CACHED_THRESHOLD;
  // Keyed on the model and on every detector setting but the threshold (the motion gate changes what is detected),
  // and on the detection code: a change to how frames become detections must not replay stale results.
  const hash = createHash('sha256');
  if (config.detector.model) hash.update(readFileSync(config.detector.model));
  if (config.detector.slot) hash.update(readFileSync(config.detector.slot.model));
  hash.update(DETECTION_CODE);
  const rate = config.source.fps === clip.truth.fps ? '' : `fps ${config.source.fps}, repeats skipped`;
  const key = hash.update(JSON.stringify(config.detector) + (dropEvery ? `drop-every ${dropEvery}` : '') + rate).digest('hex').slice(0, 12);
  const file = join(clip.dir, `detections-${key}-${CACHED_THRESHOLD}.json`);
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as FrameDetections[];
  console.error(`${clip.truth.scenario.name}: detecting (once per model and detector settings)…`);
  const capture = createCapture(config);
  const detector = await createDetector(config);
  const frames: FrameDetections[] = [];
  const repeats = new RepeatedFrameFilter();
  await capture.start();
  for await (const frame of capture) {
    // A lost frame is never shown to the detector, so the two-frame model's next pair spans two frames, as live.
    if (dropEvery && frame.index % dropEvery === dropEvery - 1) {
      frames.push({ timestampMs: frame.timestampMs, detections: [], dropped: true });
      continue;
    }
    if (repeats.isRepeat(frame)) {
      frames.push({ timestampMs: frame.timestampMs, detections: [], repeated: true });
      continue;
    }
    const found = await detector.detect(frame);
    const looked = detector.lastLooked?.();
    frames.push({
      timestampMs: frame.timestampMs,
      detections: found.map((d) => [d.x, d.y, d.w, d.h, d.score, ...(d.movement ? [d.movement.dx, d.movement.dy] : [])].map((v) => Math.round(v * 1000) / 1000)),
      ...(looked ? { looked: [looked.left, looked.right, looked.top, looked.bottom] } : {}),
    });
  }
  await capture.stop();
  await writeFile(file, JSON.stringify(frames));
  return frames;
}

interface Hypothesis {
  frames: number;
  first: Point;
  last: Point;
  /** Frames matched to each true bee. */
  bees: Map<number, number>;
}

interface Replay {
  /** How far, on average, the step between two frames' stamps is from the time between them (--arrival-delay). */
  stepErrorMs: number;
  name: string;
  /** Which of the `--seeds` clips of the scenario. */
  variant: number;
  truth: GroundTruth;
  mot: ReturnType<MotAccumulator['summary']>;
  /** Of the detections the tracker's first pass takes (score ≥ highScore). */
  precision: number;
  recall: number;
  truthIn: number;
  truthOut: number;
  agentIn: number;
  agentOut: number;
  crossings: Crossing[];
  /** Per true bee, the hypothesis matched in each frame it was visible (0 = missed). */
  beeFrames: Map<number, { t: number; h: number }[]>;
  hypotheses: Map<number, Hypothesis>;
}

function replay(clip: CachedClip, variant: number, frames: FrameDetections[]): Replay {
  const { truth } = clip;
  const config = agentConfigFor(clip, { detector: kind, model, detectorOverrides, tracker: trackerOverrides, counting: countingOverrides, fps: agentFps });
  const { tracker, counter } = createTracking(config);
  // As the agent does: a clip slower than the rate it is read at has its repeats skipped, so the frame counts follow it.
  followPictureRate(config, Math.min(truth.fps, config.source.fps), { tracker, counter });
  const threshold = thresholdOption ?? config.detector.scoreThreshold;
  if (!(threshold >= CACHED_THRESHOLD)) throw new Error(`--threshold must be at least ${CACHED_THRESHOLD}`);
  const gate = gateFor(truth);
  const mot = new MotAccumulator(gate);
  const detection = new DetectionAccumulator(gate);
  const records: EntranceMovementInput[] = [];
  const crossings: Crossing[] = [];
  const beeFrames = new Map<number, { t: number; h: number }[]>();
  const hypotheses = new Map<number, Hypothesis>();
  const stamps = arrivalDelayMs === undefined ? frames.map((f) => f.timestampMs) : liveStamps(frames, arrivalDelayMs, config.source.fps, hashString(clip.label));
  let stepErrorMs = 0;
  for (let k = 1; k < frames.length; k++) stepErrorMs += Math.abs(stamps[k]! - stamps[k - 1]! - (frames[k]!.timestampMs - frames[k - 1]!.timestampMs));
  frames.forEach((frame, index) => {
    // Scored on the frames the agent saw: what it did with a lost or repeated frame is nothing.
    if (frame.dropped || frame.repeated) return;
    const detections: Detection[] = frame.detections
      .filter((d) => d[4]! >= threshold)
      .map(([x, y, w, h, score, dx, dy]) => ({ x: x!, y: y!, w: w!, h: h!, score: score!, ...(dx !== undefined && dy !== undefined ? { movement: { dx, dy } } : {}) }));
    const [left, right, top, bottom] = frame.looked ?? [];
    const looked = frame.looked ? { left: left!, right: right!, top: top!, bottom: bottom! } : undefined;
    const update = tracker.update(stamps[index]!, detections, looked);
    const output = counter.onFrame(stamps[index]!, update.tracks, update.ended);
    records.push(...output.movements);
    crossings.push(...output.crossings);
    const expected = truth.frames[sourceFrameAt(index, truth.fps, config.source.fps)];
    if (!expected) throw new Error(`${truth.scenario.name}: more frames than the ground truth has`);
    const boxes = expected.boxes.map((b) => ({ id: b.trackId, x: b.x, y: b.y }));
    const found = update.tracks.map((t) => ({ id: t.id, x: t.x, y: t.y }));
    mot.update(boxes, found);
    // Scored where the detector looked (all of the frame, or the slot band between whole frames).
    detection.update(looked ? boxes.filter((b) => insideArea(b, looked)) : boxes, detections.filter((d) => d.score >= config.tracker.highScore));
    for (const track of update.tracks) {
      const h = hypotheses.get(track.id);
      if (h) {
        h.frames++;
        h.last = [track.x, track.y];
      } else hypotheses.set(track.id, { frames: 1, first: [track.x, track.y], last: [track.x, track.y], bees: new Map() });
    }
    const partner = new Map<number, number>();
    for (const [i, j] of matchByDistance(boxes, found, gate)) {
      partner.set(boxes[i]!.id, found[j]!.id);
      const bees = hypotheses.get(found[j]!.id)!.bees;
      bees.set(boxes[i]!.id, (bees.get(boxes[i]!.id) ?? 0) + 1);
    }
    if (traced && traced.scenario === clip.label) {
      const bee = boxes.find((b) => b.id === traced.bee);
      if (bee) {
        const near = (p: { x: number; y: number }) => Math.hypot(p.x - bee.x, p.y - bee.y) < 3 * truth.beeLengthPx;
        const fmt = (p: { x: number; y: number }) => `${p.x.toFixed(0)},${p.y.toFixed(0)}`;
        const side = signedDistanceToPolygon([bee.x, bee.y], truth.entranceZone as Point[]).toFixed(0);
        console.log(
          `f${index} bee ${fmt(bee)} (zone ${side}) → h${partner.get(bee.id) ?? '-'} | dets ${detections.filter(near).map((d) => `${fmt(d)}[${d.w.toFixed(0)}x${d.h.toFixed(0)}]@${d.score.toFixed(2)}${d.movement ? `~${d.movement.dx.toFixed(1)},${d.movement.dy.toFixed(1)}` : ''}`).join(' ')} | tracks ${update.tracks.filter(near).map((t) => `h${t.id}:${fmt(t)}`).join(' ')} | ended ${update.ended.map((e) => `h${e.id}`).join(' ')}`,
        );
      }
    }
    for (const box of boxes) {
      let list = beeFrames.get(box.id);
      if (!list) beeFrames.set(box.id, (list = []));
      list.push({ t: expected.t, h: partner.get(box.id) ?? 0 });
    }
  });
  const last = counter.flush(tracker.flush());
  records.push(...last.movements);
  crossings.push(...last.crossings);
  const c = compareIntervals(truth.intervals, inClipUnits(records, config.source.fps, truth.fps));
  return { name: clip.label, variant, truth, stepErrorMs: stepErrorMs / Math.max(1, frames.length - 1), mot: mot.summary(), precision: detection.precision, recall: detection.recall, truthIn: c.truthIn, truthOut: c.truthOut, agentIn: c.agentIn, agentOut: c.agentOut, crossings, beeFrames, hypotheses };
}

/** What a live capture would stamp the frames with had each arrived up to `maxDelayMs` after it was taken. */
function liveStamps(frames: readonly FrameDetections[], maxDelayMs: number, fps: number, seed: number): number[] {
  // A frame is read after the one before it, however early it came.
  const arrivals: number[] = [];
  frames.forEach((f, k) => arrivals.push(Math.max(f.timestampMs + hashUnit(seed, k) * maxDelayMs, arrivals[k - 1] ?? -Infinity)));
  if (arrivalStamps) return arrivals;
  const clock = new StreamClock(1000 / fps);
  return arrivals.map((t, k) => clock.stamp(k, t));
}

/** The true bee a hypothesis followed for most of its life. */
function dominantBee(h: Hypothesis | undefined): number | undefined {
  let best: number | undefined;
  let most = 0;
  for (const [bee, n] of h?.bees ?? []) if (n > most) [best, most] = [bee, n];
  return best;
}

function explain(r: Replay): string[] {
  const zone = r.truth.entranceZone as Point[];
  const side = (p: Point) => {
    const d = signedDistanceToPolygon(p, zone);
    return d <= -r.truth.counting.hysteresisPx ? 'in' : d >= r.truth.counting.hysteresisPx ? 'out' : 'edge';
  };
  const unclaimed = r.truth.crossings.map((c) => ({ ...c, claimed: false }));
  const invented: string[] = [];
  for (const crossing of r.crossings) {
    const h = r.hypotheses.get(Number(crossing.trackId));
    const bee = dominantBee(h);
    const match = unclaimed.find((c) => !c.claimed && c.trackId === bee && c.direction === crossing.direction);
    if (match) match.claimed = true;
    else invented.push(`  extra ${crossing.direction.padEnd(3)} t=${(crossing.t - r.truth.startTime).toFixed(1)}s h${crossing.trackId} (mostly bee ${bee ?? 'none'}, ${h?.frames ?? 0} frames)`);
  }
  const lines: string[] = [];
  for (const c of unclaimed.filter((c) => !c.claimed)) {
    const seen = r.beeFrames.get(c.trackId) ?? [];
    const runs: { h: number; n: number }[] = [];
    for (const f of seen) {
      const run = runs.at(-1);
      if (run && run.h === f.h) run.n++;
      else runs.push({ h: f.h, n: 1 });
    }
    const path = runs.map((run) => (run.h ? `h${run.h}×${run.n}` : `–×${run.n}`)).join(' ');
    const ids = [...new Set(runs.filter((run) => run.h).map((run) => run.h))];
    const fates = ids.map((id) => {
      const h = r.hypotheses.get(id)!;
      return `h${id}: ${side(h.first)}→${side(h.last)}${dominantBee(h) === c.trackId ? '' : ` (mostly bee ${dominantBee(h)})`}`;
    });
    const role = r.truth.tracks.find((t) => t.trackId === c.trackId)?.role ?? '?';
    lines.push(`  missed ${c.direction.padEnd(3)} t=${(c.t - r.truth.startTime).toFixed(1)}s bee ${c.trackId} (${role}): ${path} | ${fates.join(', ')}`);
  }
  return [...lines, ...invented];
}

/** IDF1, identity switches and count error over several replays together. */
function totals(replays: readonly Replay[]): { idf1: number; switches: number; countError: number } {
  let wrong = 0;
  let traffic = 0;
  let switches = 0;
  let idtp = 0;
  let idMistakes = 0;
  for (const r of replays) {
    wrong += Math.abs(r.agentIn - r.truthIn) + Math.abs(r.agentOut - r.truthOut);
    traffic += r.truthIn + r.truthOut;
    switches += r.mot.switches;
    idtp += r.mot.idtp;
    idMistakes += r.mot.idfp + r.mot.idfn;
  }
  return { idf1: (2 * idtp) / Math.max(1, 2 * idtp + idMistakes), switches, countError: wrong / Math.max(1, traffic) };
}

const percent = (share: number): string => `${(share * 100).toFixed(1)} %`;

async function main(): Promise<void> {
  await mkdir(cacheDir, { recursive: true });
  const replays: Replay[] = [];
  for (let variant = 0; variant < seeds; variant++) {
    for (const name of names) {
      const clip = await cachedClip(name, seconds, cacheDir, variant);
      replays.push(replay(clip, variant, await detectionsFor(clip)));
    }
  }
  console.log(`tracker ${JSON.stringify(trackerOverrides)} counting ${JSON.stringify(countingOverrides)}`);
  console.log('| scenario | det. precision | det. recall | MOTA | IDF1 | switches | in true/agent | out true/agent | count error |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of replays) {
    console.log(`| ${r.name} | ${r.precision.toFixed(3)} | ${r.recall.toFixed(3)} | ${r.mot.mota.toFixed(3)} | ${r.mot.idf1.toFixed(3)} | ${r.mot.switches} | ${r.truthIn}/${r.agentIn} | ${r.truthOut}/${r.agentOut} | ${percent(totals([r]).countError)} |`);
  }
  if (seeds > 1) {
    for (let variant = 0; variant < seeds; variant++) {
      const t = totals(replays.filter((r) => r.variant === variant));
      console.log(`| ${clipSetLabel(variant)} | | | | ${t.idf1.toFixed(3)} | ${t.switches} | | | ${percent(t.countError)} |`);
    }
  }
  const all = totals(replays);
  console.log(`| **all** | | | | ${all.idf1.toFixed(3)} | ${all.switches} | | | ${percent(all.countError)} |`);
  if (arrivalDelayMs !== undefined) {
    const stepError = replays.reduce((sum, r) => sum + r.stepErrorMs, 0) / replays.length;
    console.log(`\nframes up to ${arrivalDelayMs} ms late, stamped ${arrivalStamps ? 'at arrival' : "by the live capture's stream clock"}: each step between two frames off by ${stepError.toFixed(2)} ms on average`);
  }
  if (identities) {
    for (const r of replays) {
      console.log(`\n${r.name}: frames each true bee spent off its main track, by role (missed / on other tracks)`);
      const byRole = new Map<string, { bees: number; frames: number; missed: number; other: number }>();
      const worst: string[] = [];
      for (const [bee, frames] of r.beeFrames) {
        const counts = new Map<number, number>();
        for (const f of frames) if (f.h) counts.set(f.h, (counts.get(f.h) ?? 0) + 1);
        const main = Math.max(0, ...counts.values());
        const missed = frames.filter((f) => !f.h).length;
        const other = frames.length - missed - main;
        const role = r.truth.tracks.find((t) => t.trackId === bee)?.role ?? '?';
        const sum = byRole.get(role) ?? { bees: 0, frames: 0, missed: 0, other: 0 };
        byRole.set(role, { bees: sum.bees + 1, frames: sum.frames + frames.length, missed: sum.missed + missed, other: sum.other + other });
        if (missed + other > 0.2 * frames.length && missed + other > 50) worst.push(`    bee ${bee} (${role}): ${frames.length} frames, ${missed} missed, ${other} on ${counts.size - 1} other tracks`);
      }
      for (const [role, sum] of byRole) console.log(`  ${role}: ${sum.bees} bees, ${sum.frames} frames, ${sum.missed} missed, ${sum.other} on other tracks`);
      for (const line of worst) console.log(line);
    }
  }
  if (explainMisses) {
    for (const r of replays) {
      console.log(`\n${r.name}:`);
      for (const line of explain(r)) console.log(line);
    }
  }
}

await main();
