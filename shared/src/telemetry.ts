import { Type, type Static } from 'typebox';
import { Identifier, OneOrBatch, OptionalUnixSeconds } from './common.ts';

/**
 * Bounds the spec leaves open, set where the store needs them: counts are 32-bit integers in Postgres (a larger one was
 * a 500), and a reading near the double's limit (1.7e308) was stored, then overflowed the sums of every query over
 * its hive. No sensor, speed or bee count comes near either.
 */
export const MAX_COUNT = 2_147_483_647;
export const MAX_READING = 1e9;

const Reading = (description?: string) =>
  Type.Number({ minimum: -MAX_READING, maximum: MAX_READING, ...(description === undefined ? {} : { description }) });

export const MetricFields = Type.Object(
  {
    temperatureCelsius: Type.Optional(Reading()),
    humidityPercent: Type.Optional(Reading()),
    weightKg: Type.Optional(Reading()),
  },
  { title: 'MetricFields', additionalProperties: false, minProperties: 1 },
);
export type MetricFields = Static<typeof MetricFields>;

export const MetricInput = Type.Object(
  {
    hiveId: Identifier,
    fields: MetricFields,
    timestamp: OptionalUnixSeconds,
    dedupeKey: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Idempotency key a device repeats when it retries the same measurement.' }),
    ),
  },
  { title: 'MetricInput', additionalProperties: false },
);
export type MetricInput = Static<typeof MetricInput>;

export const MetricBody = OneOrBatch(MetricInput, 'MetricBody');
export type MetricBody = Static<typeof MetricBody>;

const Count = Type.Integer({ minimum: 0, maximum: MAX_COUNT });

export const EntranceMovementInput = Type.Object(
  {
    hiveId: Identifier,
    boxId: Identifier,
    beesOut: Type.Number({ minimum: 0, maximum: MAX_COUNT }),
    beesIn: Type.Number({ minimum: 0, maximum: MAX_COUNT }),
    netFlow: Type.Optional(Type.Number({ minimum: -MAX_COUNT, maximum: MAX_COUNT, description: 'May be negative.' })),
    avgSpeed: Type.Optional(Reading('Average bee speed, pixels per frame.')),
    p95Speed: Type.Optional(Reading('95th percentile bee speed, pixels per frame.')),
    stationaryBees: Type.Optional(Count),
    detectedBees: Type.Optional(Count),
    beeInteractions: Type.Optional(Count),
    timestamp: OptionalUnixSeconds,
  },
  { title: 'EntranceMovementInput', additionalProperties: false },
);
export type EntranceMovementInput = Static<typeof EntranceMovementInput>;

export const MovementBody = OneOrBatch(EntranceMovementInput, 'MovementBody');
export type MovementBody = Static<typeof MovementBody>;
