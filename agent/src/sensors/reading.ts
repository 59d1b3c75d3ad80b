import { compileValidator, MetricFields, type Identifier, type MetricInput } from '@hivegate/shared';

/**
 * Turns what a sensor program prints (or a sensor file holds) into the shared metric fields. Pure.
 *
 * Two formats: a JSON object (`{"temperatureCelsius": 21.5, "weightKg": 41.2}`) or `key=value` lines. The shared
 * names are used as they are; a few obvious short names (`temperature`, `humidity`, `weight`) are accepted too.
 * Other keys (a battery voltage, say) are left out and listed, so the agent can say once what it ignores.
 */
const ALIASES: Record<string, keyof MetricFields> = {
  temperaturecelsius: 'temperatureCelsius',
  temperature: 'temperatureCelsius',
  temperature_c: 'temperatureCelsius',
  temp: 'temperatureCelsius',
  humiditypercent: 'humidityPercent',
  humidity: 'humidityPercent',
  humidity_percent: 'humidityPercent',
  weightkg: 'weightKg',
  weight: 'weightKg',
  weight_kg: 'weightKg',
};

export type SensorParse = { ok: true; fields: MetricFields; ignoredKeys: string[] } | { ok: false; error: string };

const checkFields = compileValidator(MetricFields);

export function parseSensorOutput(text: string): SensorParse {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: false, error: 'the sensor output is empty' };
  let entries: [string, unknown][];
  if (trimmed.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (error) {
      return { ok: false, error: `the sensor output is not valid JSON: ${(error as Error).message}` };
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { ok: false, error: 'the sensor output must be a JSON object' };
    entries = Object.entries(parsed);
  } else {
    entries = [];
    for (const [index, raw] of trimmed.split(/\r?\n/).entries()) {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) continue;
      const equals = line.indexOf('=');
      if (equals <= 0) return { ok: false, error: `line ${index + 1} ("${line.slice(0, 60)}") is not key=value` };
      const value = line.slice(equals + 1).trim();
      entries.push([line.slice(0, equals).trim(), value === '' ? Number.NaN : Number(value)]);
    }
  }
  const fields: Record<string, number> = {};
  const ignoredKeys: string[] = [];
  for (const [key, value] of entries) {
    const name = ALIASES[key.toLowerCase()];
    if (!name) {
      ignoredKeys.push(key);
      continue;
    }
    if (value === null) continue; // a sensor that has no reading this time
    if (typeof value !== 'number' || !Number.isFinite(value)) return { ok: false, error: `${key} must be a number, got ${JSON.stringify(value)}` };
    if (name in fields) return { ok: false, error: `${key} repeats ${name}` };
    fields[name] = value;
  }
  if (Object.keys(fields).length === 0) {
    return { ok: false, error: `no reading: expected temperatureCelsius, humidityPercent or weightKg${ignoredKeys.length ? ` (got ${ignoredKeys.join(', ')})` : ''}` };
  }
  const result = checkFields(fields);
  if (!result.ok) return { ok: false, error: result.error };
  return { ok: true, fields: result.value, ignoredKeys };
}

/**
 * The metric the outbox queues for one reading. Its dedupe key names the device, the hive and the read slot (the
 * time rounded down to the read interval), so a record retried, or queued twice in one slot after a restart, is
 * stored once by the cloud.
 */
export function sensorMetric(input: { deviceId: string; hiveId: Identifier; fields: MetricFields; readAtMs: number; intervalSeconds: number }): MetricInput {
  const seconds = Math.floor(input.readAtMs / 1000);
  const slot = Math.floor(seconds / input.intervalSeconds) * input.intervalSeconds;
  return { hiveId: input.hiveId, fields: input.fields, timestamp: seconds, dedupeKey: `${input.deviceId}:${String(input.hiveId)}:${slot}` };
}
