import { Type, type Static } from 'typebox';
import { Identifier, OneOrBatch, UnixSeconds } from './common.ts';

export const MetricFields = Type.Object(
  {
    temperatureCelsius: Type.Optional(Type.Number()),
    humidityPercent: Type.Optional(Type.Number()),
    weightKg: Type.Optional(Type.Number()),
  },
  { title: 'MetricFields', additionalProperties: false, minProperties: 1 },
);
export type MetricFields = Static<typeof MetricFields>;

export const MetricInput = Type.Object(
  {
    hiveId: Identifier,
    fields: MetricFields,
    timestamp: Type.Optional(UnixSeconds),
    dedupeKey: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'Idempotency key a device repeats when it retries the same measurement.' }),
    ),
  },
  { title: 'MetricInput', additionalProperties: false },
);
export type MetricInput = Static<typeof MetricInput>;

export const MetricBody = OneOrBatch(MetricInput, 'MetricBody');
export type MetricBody = Static<typeof MetricBody>;

const Count = Type.Integer({ minimum: 0 });

export const EntranceMovementInput = Type.Object(
  {
    hiveId: Identifier,
    boxId: Identifier,
    beesOut: Type.Number({ minimum: 0 }),
    beesIn: Type.Number({ minimum: 0 }),
    netFlow: Type.Optional(Type.Number({ description: 'May be negative.' })),
    avgSpeed: Type.Optional(Type.Number({ description: 'Average bee speed, pixels per frame.' })),
    p95Speed: Type.Optional(Type.Number({ description: '95th percentile bee speed, pixels per frame.' })),
    stationaryBees: Type.Optional(Count),
    detectedBees: Type.Optional(Count),
    beeInteractions: Type.Optional(Count),
    timestamp: Type.Optional(UnixSeconds),
  },
  { title: 'EntranceMovementInput', additionalProperties: false },
);
export type EntranceMovementInput = Static<typeof EntranceMovementInput>;

export const MovementBody = OneOrBatch(EntranceMovementInput, 'MovementBody');
export type MovementBody = Static<typeof MovementBody>;
