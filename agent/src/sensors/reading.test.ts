import { describe, expect, it } from 'vitest';
import { parseSensorOutput, sensorMetric } from './reading.ts';

describe('parseSensorOutput', () => {
  it('reads a JSON object with the shared field names', () => {
    expect(parseSensorOutput('{"temperatureCelsius": 21.5, "weightKg": 41.25}\n')).toEqual({ ok: true, fields: { temperatureCelsius: 21.5, weightKg: 41.25 }, ignoredKeys: [] });
  });

  it('reads key=value lines, with comments, short names and unknown keys listed', () => {
    expect(parseSensorOutput('# scale\ntemperature=19.0\nHumidity = 63\nbattery=3.7\n')).toEqual({
      ok: true, fields: { temperatureCelsius: 19, humidityPercent: 63 }, ignoredKeys: ['battery'],
    });
  });

  it('skips a null reading but needs at least one', () => {
    expect(parseSensorOutput('{"weightKg": null, "temperatureCelsius": 3}')).toMatchObject({ ok: true, fields: { temperatureCelsius: 3 } });
    expect(parseSensorOutput('{"battery": 3.7}')).toEqual({ ok: false, error: 'no reading: expected temperatureCelsius, humidityPercent or weightKg (got battery)' });
    expect(parseSensorOutput('  ')).toEqual({ ok: false, error: 'the sensor output is empty' });
  });

  it('names what is wrong', () => {
    expect(parseSensorOutput('weight=heavy')).toEqual({ ok: false, error: 'weight must be a number, got null' });
    expect(parseSensorOutput('{"temperatureCelsius": "warm"}')).toEqual({ ok: false, error: 'temperatureCelsius must be a number, got "warm"' });
    expect(parseSensorOutput('temperature=1\ntemp=2')).toEqual({ ok: false, error: 'temp repeats temperatureCelsius' });
    expect(parseSensorOutput('just words')).toEqual({ ok: false, error: 'line 1 ("just words") is not key=value' });
    expect(parseSensorOutput('{"a":')).toMatchObject({ ok: false, error: expect.stringContaining('not valid JSON') });
    expect(parseSensorOutput('[1]')).toMatchObject({ ok: false, error: expect.stringContaining('not key=value') });
  });
});

describe('sensorMetric', () => {
  it('keys the reading by device, hive and read slot', () => {
    const at = Date.UTC(2026, 0, 1, 12, 0, 59, 500);
    const metric = sensorMetric({ deviceId: 'pi-1', hiveId: 7, fields: { weightKg: 40 }, readAtMs: at, intervalSeconds: 60 });
    expect(metric).toEqual({ hiveId: 7, fields: { weightKg: 40 }, timestamp: at / 1000 - 0.5, dedupeKey: `pi-1:7:${Date.UTC(2026, 0, 1, 12, 0, 0) / 1000}` });
    // A retry (or a re-read after a restart) within the same minute has the same key.
    expect(sensorMetric({ deviceId: 'pi-1', hiveId: 7, fields: { weightKg: 41 }, readAtMs: at - 50_000, intervalSeconds: 60 }).dedupeKey).toBe(metric.dedupeKey);
  });
});
