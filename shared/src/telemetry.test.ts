import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { compileValidator, MetricBody, MovementBody, MAX_BATCH_ITEMS, formatPath, unstorableJsonProblem, MAX_BODY_DEPTH } from './index.ts';

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

describe('unstorableJsonProblem', () => {
  it('names the first value or key holding U+0000, and nothing in clean input', () => {
    const nul = 'must not contain the NUL character (U+0000)';
    expect(unstorableJsonProblem([{ hiveId: 'h', fields: { weightKg: 1 } }, { hiveId: 'a\u0000b' }])).toBe(`[1].hiveId ${nul}`);
    expect(unstorableJsonProblem({ status: { ['x\u0000']: 1 } })).toBe(`status.x\u0000 ${nul}`);
    expect(unstorableJsonProblem({ variables: { ids: ['ok', '\u0000'] } })).toBe(`variables.ids[1] ${nul}`);
    expect(unstorableJsonProblem('\u0000')).toBe(`body ${nul}`);
    expect(unstorableJsonProblem({ a: ['x', 1, null, true, { b: 'y' }] })).toBeUndefined();
  });

  it('refuses a lone UTF-16 surrogate in a value or key, and keeps a whole emoji', () => {
    // Broke: "\ud800" in a status object was a 500 from Postgres json, and as a box id it was stored as U+FFFD.
    expect(unstorableJsonProblem({ boxId: 'cam\ud83d' })).toBe('boxId must be well-formed Unicode: it holds a lone UTF-16 surrogate (\\ud83d)');
    expect(unstorableJsonProblem({ status: { ['\udc00']: 1 } })).toMatch(/^status\.\udc00 must be well-formed Unicode/);
    expect(unstorableJsonProblem({ boxId: 'cam 🐝', status: { note: 'é' } })).toBeUndefined();
  });

  it('refuses keys that could reach a prototype, and keeps an ordinary "constructor"', () => {
    expect(unstorableJsonProblem(JSON.parse('{"status": {"__proto__": {"x": 1}}}'))).toBe("status.__proto__ must not be used as a property name: it could reach an object's prototype");
    expect(unstorableJsonProblem(JSON.parse('{"constructor": {"prototype": 1}}'))).toMatch(/^constructor must not be used/);
    expect(unstorableJsonProblem({ status: { constructor: 'Acme Cams' } })).toBeUndefined();
  });

  it('finds the first problem in document order', () => {
    expect(unstorableJsonProblem([{ a: 'ok', b: '\ud800' }, { c: '\u0000' }])).toMatch(/^\[0\]\.b /);
    expect(unstorableJsonProblem([{ a: 'ok' }, { ['\u0000']: 1, c: '\ud800' }])).toMatch(/^\[1\]\.\u0000 must not contain/);
  });

  it('refuses nesting deeper than the limit by its top-level field, without overflowing the stack', () => {
    // Broke: a status object nested 10 000 levels deep overflowed the call stack of the recursive walk (a 500).
    let deep: unknown = 1;
    for (let i = 0; i < 10_000; i++) deep = { a: deep };
    expect(unstorableJsonProblem({ boxId: 'b', status: deep })).toBe(`status is nested more than ${MAX_BODY_DEPTH} levels deep`);
    let atLimit: unknown = 1;
    for (let i = 0; i < MAX_BODY_DEPTH - 1; i++) atLimit = [atLimit];
    expect(unstorableJsonProblem({ x: atLimit })).toBeUndefined();
    expect(unstorableJsonProblem({ x: [atLimit] })).toBe(`x is nested more than ${MAX_BODY_DEPTH} levels deep`);
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
