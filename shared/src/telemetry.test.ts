import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { compileValidator, MetricBody, MovementBody, MAX_BATCH_ITEMS, formatPath, nulCharacterPath } from './index.ts';

const load = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8')) as Record<string, unknown>;
const invalid = (name: string) => load(name) as Record<string, { body: unknown; error: string }>;

const checkMetrics = compileValidator(MetricBody);
const checkMovement = compileValidator(MovementBody);

describe('metric fixtures', () => {
  it.each(Object.entries(load('metrics/valid.json')))('%s is accepted', (_name, body) => {
    expect(checkMetrics(body)).toEqual({ ok: true, value: body });
  });
  it.each(Object.entries(invalid('metrics/invalid.json')))('%s is refused naming the field', (_name, { body, error }) => {
    const result = checkMetrics(body);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toContain(error);
  });
});

describe('movement fixtures', () => {
  it.each(Object.entries(load('movement/valid.json')))('%s is accepted', (_name, body) => {
    expect(checkMovement(body).ok).toBe(true);
  });
  it.each(Object.entries(invalid('movement/invalid.json')))('%s is refused naming the field', (_name, { body, error }) => {
    const result = checkMovement(body);
    expect(result).toEqual({ ok: false, error: expect.stringContaining(error) });
  });
});

describe('batch bounds', () => {
  const item = { hiveId: 'h', fields: { weightKg: 1 } };
  it('accepts exactly the maximum', () => {
    expect(checkMetrics(Array.from({ length: MAX_BATCH_ITEMS }, () => item)).ok).toBe(true);
  });
  it('refuses one more than the maximum', () => {
    expect(checkMetrics(Array.from({ length: MAX_BATCH_ITEMS + 1 }, () => item))).toEqual({
      ok: false,
      error: 'body must contain at most 1000 items',
    });
  });
  it('names the allowed metric fields when none is given', () => {
    expect(checkMetrics({ hiveId: 1, fields: {} })).toEqual({
      ok: false,
      error: 'fields must have at least one of temperatureCelsius, humidityPercent, weightKg',
    });
  });
  it('refuses an empty hive id', () => {
    expect(checkMetrics({ hiveId: '', fields: { weightKg: 1 } })).toEqual({ ok: false, error: 'hiveId must not be empty' });
  });
  it('refuses infinite and out-of-range timestamps', () => {
    expect(checkMetrics({ hiveId: 1, fields: { weightKg: 1 }, timestamp: -1 }).ok).toBe(false);
    expect(checkMetrics({ hiveId: 1, fields: { weightKg: 1 }, timestamp: 1e15 }).ok).toBe(false);
  });
});

describe('nulCharacterPath', () => {
  it('names the first value or key holding U+0000, and nothing in clean input', () => {
    expect(nulCharacterPath([{ hiveId: 'h', fields: { weightKg: 1 } }, { hiveId: 'a\u0000b' }])).toBe('[1].hiveId');
    expect(nulCharacterPath({ status: { ['x\u0000']: 1 } })).toBe('status.x\u0000');
    expect(nulCharacterPath({ variables: { ids: ['ok', '\u0000'] } })).toBe('variables.ids[1]');
    expect(nulCharacterPath('\u0000')).toBe('body');
    expect(nulCharacterPath({ a: ['x', 1, null, true, { b: 'y' }] })).toBeUndefined();
  });
});

describe('formatPath', () => {
  it('writes array indexes in brackets and properties with dots', () => {
    expect(formatPath('/3/fields/weightKg')).toBe('[3].fields.weightKg');
    expect(formatPath('/trackHistory/7/2/0')).toBe('trackHistory[7][2][0]');
    expect(formatPath('', 'hiveId')).toBe('hiveId');
    expect(formatPath('/0', 'boxId')).toBe('[0].boxId');
  });
});
