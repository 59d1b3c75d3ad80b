/** Hive and entrance readings: the apiary overview and the hive page charts. */
import { defineOperation } from './graphql.ts';

export interface Reading {
  time: string;
  temperatureCelsius: number | null;
  humidityPercent: number | null;
  weightKg: number | null;
}

/** A hive's newest value of each field, each with the time it was taken; `time` is its newest reading of any. */
export interface LatestReading extends Reading {
  temperatureCelsiusAt: string | null;
  humidityPercentAt: string | null;
  weightKgAt: string | null;
}

export interface DayTotals {
  beesIn: number;
  beesOut: number;
  netFlow: number;
  lastSampleAt: string | null;
}

export interface ApiaryBox {
  id: string;
  hiveId: string | null;
  today: DayTotals;
}

export interface ApiaryHive {
  id: string;
  firstSeenAt: string;
  lastReading: LatestReading | null;
  boxes: ApiaryBox[];
}

/** The box's entrance camera as the live gateway last saw it; null when it never reported. */
export interface DeviceState {
  online: boolean;
  lastSeenAt: string;
}

export interface OverviewBox extends ApiaryBox {
  device: DeviceState | null;
}

export interface OverviewHive extends ApiaryHive {
  boxes: OverviewBox[];
}

export interface MetricBucket extends Reading {
  samples: number;
}

export interface MovementBucket {
  time: string;
  beesIn: number;
  beesOut: number;
  netFlow: number;
  avgSpeed: number | null;
  p95Speed: number | null;
  detectedBees: number | null;
  samples: number;
}


const READING = 'time temperatureCelsius humidityPercent weightKg';
const LATEST_READING = `${READING} temperatureCelsiusAt humidityPercentAt weightKgAt`;
// "Today" ends at the user's midnight, not UTC's: each query that asks for it names the browser's time zone.
const TODAY = 'today(timeZone: $timeZone) { beesIn beesOut netFlow lastSampleAt }';

/** The time zone the browser shows times in (an IANA name), which "today" is counted in. */
export function browserTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}
type InTimeZone = { timeZone: string };
const HIVE = `id firstSeenAt lastReading { ${LATEST_READING} } boxes { id hiveId ${TODAY} }`;

const OVERVIEW_BOX = `id hiveId ${TODAY} device { online lastSeenAt }`;

/**
 * The overview: every hive, each box's traffic today and whether its camera is online; and the boxes in no hive yet,
 * which are the counted boxes without a hive and those not counting yet (a camera, clips or a token of theirs known).
 */
export const ApiaryQuery = defineOperation<{ hives: OverviewHive[]; boxes: OverviewBox[]; boxesAwaitingCounts: OverviewBox[] }, InTimeZone>(
  `query Apiary($timeZone: String) {
    hives { id firstSeenAt lastReading { ${LATEST_READING} } boxes { ${OVERVIEW_BOX} } }
    boxes { ${OVERVIEW_BOX} }
    boxesAwaitingCounts { ${OVERVIEW_BOX} }
  }`,
);

export const HiveQuery = defineOperation<{ hive: ApiaryHive | null }, { hiveId: string } & InTimeZone>(
  `query Hive($hiveId: ID!, $timeZone: String) { hive(id: $hiveId) { ${HIVE} } }`,
);

// Buckets are laid on the browser's wall clock too, so a day's bar is the same day as "today".
type Range = { from: string; to: string; bucketSeconds: number | null } & InTimeZone;

export const HiveMetricsQuery = defineOperation<{ hiveMetrics: MetricBucket[] }, Range & { hiveId: string }>(
  `query HiveMetrics($hiveId: ID!, $from: DateTime!, $to: DateTime!, $bucketSeconds: Int, $timeZone: String) {
    hiveMetrics(hiveId: $hiveId, from: $from, to: $to, bucketSeconds: $bucketSeconds, timeZone: $timeZone) { ${READING} samples }
  }`,
);

export const EntranceMovementQuery = defineOperation<{ entranceMovement: MovementBucket[] }, Range & { boxId: string }>(
  `query EntranceMovement($boxId: ID!, $from: DateTime!, $to: DateTime!, $bucketSeconds: Int, $timeZone: String) {
    entranceMovement(boxId: $boxId, from: $from, to: $to, bucketSeconds: $bucketSeconds, timeZone: $timeZone) {
      time beesIn beesOut netFlow avgSpeed p95Speed detectedBees samples
    }
  }`,
);

/** One box with its totals for today; null when the user has nothing of that box (a mistyped id, another's box). */
export const EntranceBoxQuery = defineOperation<{ box: ApiaryBox | null }, { boxId: string } & InTimeZone>(
  `query EntranceBox($boxId: ID!, $timeZone: String) { box(id: $boxId) { id hiveId ${TODAY} } }`,
);
