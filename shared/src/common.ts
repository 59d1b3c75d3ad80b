import { Type, type Static, type TSchema } from 'typebox';

/** Largest number of items one telemetry batch may carry (spec §8). */
export const MAX_BATCH_ITEMS = 1000;

/** Latest instant Postgres and JavaScript both represent comfortably: 9999-12-31T23:59:59Z. */
export const MAX_UNIX_SECONDS = 253_402_300_799;
/**
 * A device's clock or a file's date before this is an unset one (1970 from a clock never set, 1904 or 1970 as a
 * writer's zero date), not a recording.
 */
export const EARLIEST_DEVICE_TIME_MS = Date.UTC(2000, 0, 1);
/** A device's time may be this far ahead of the server's clock (time zones, a clock a little fast), not more. */
export const MAX_DEVICE_TIME_AHEAD_MS = 86_400_000;

/**
 * Why a device's time is not believable (before 2000, or more than a day ahead of `now`: a clock never set, or
 * seconds sent as milliseconds), or undefined. `shown` is the value as the device sent it.
 */
export function deviceTimeProblem(instantMs: number, now: Date, shown: string): string | undefined {
  if (instantMs < EARLIEST_DEVICE_TIME_MS) return `${shown} is before 2000: is the device's clock set?`;
  if (instantMs > now.getTime() + MAX_DEVICE_TIME_AHEAD_MS) return `${shown} is more than a day ahead of the server's clock: is the device's clock set?`;
  return undefined;
}

/**
 * Hive and box identifiers arrive as JSON strings or integers (spec §2.1); the service stores
 * them as text, so `7` and `"7"` name the same hive.
 */
export const Identifier = Type.Union(
  [Type.String({ minLength: 1, maxLength: 128 }), Type.Integer({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER })],
  { description: 'String or integer identifier; both forms name the same record.' },
);
export type Identifier = Static<typeof Identifier>;

export const UnixSeconds = Type.Integer({ format: 'int64', minimum: 0, maximum: MAX_UNIX_SECONDS, description: 'Unix time in seconds.' });

/** A record's optional timestamp; described where it is optional, as the trajectory upload's is required. */
export const OptionalUnixSeconds = Type.Optional(
  Type.Integer({ format: 'int64', minimum: 0, maximum: MAX_UNIX_SECONDS, description: 'Unix time in seconds. When omitted, the server time is used.' }),
);

/** Marker the cloud's validator reads to check "one item or a batch" bodies branch by branch. */
export const ONE_OR_BATCH = 'x-one-or-batch';

/** A body that is one item or an array of 1..1000 of them (spec §4.1: both forms are valid). */
export function OneOrBatch<T extends TSchema>(item: T, title: string) {
  return Type.Union([item, Type.Array(item, { minItems: 1, maxItems: MAX_BATCH_ITEMS })], {
    title,
    [ONE_OR_BATCH]: true,
    description: `One item or an array of 1 to ${MAX_BATCH_ITEMS} items.`,
  });
}

export function asArray<T>(body: T | T[]): T[] {
  return Array.isArray(body) ? body : [body];
}

export const HealthResponse = Type.Object({ hello: Type.String() }, { title: 'HealthResponse' });
export const MessageResponse = Type.Object({ message: Type.String() }, { title: 'MessageResponse' });
export const ErrorResponse = Type.Object({ error: Type.String() }, { title: 'ErrorResponse' });
export type ErrorResponse = Static<typeof ErrorResponse>;
