import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { TSchema, Static } from 'typebox';
import { MAX_UNIX_SECONDS, ONE_OR_BATCH } from './common.ts';

/**
 * Validation shared by the cloud (request bodies) and the agent (records before they are queued).
 * Errors name the offending field with its item index, e.g. `[3].fields.weightKg must be a number`,
 * because that is what a device maker needs to find the bug in their firmware.
 */
export type ValidationResult<T> = { ok: true; value: T } | { ok: false; error: string };
export type Validator<T> = (data: unknown) => ValidationResult<T>;

/** The format of a server address given in config: `http://` or `https://` and a host (`http://` alone passed a prefix pattern). */
export const HTTP_URL = 'http-url';

/**
 * `allErrors` reports every failure instead of the first: for a config file, which a person fixes in one go; request
 * bodies stop at the first, as a client fixes one field at a time and a huge batch should not cost a huge answer.
 */
export function createAjv(options: { allErrors?: boolean } = {}): Ajv {
  const ajv = new Ajv({
    allErrors: options.allErrors ?? false,
    coerceTypes: false,
    useDefaults: false,
    removeAdditional: false,
    strict: true,
    strictRequired: false,
    verbose: true, // errors carry their parent schema, used to list the allowed metric fields
  });
  ajv.addKeyword(ONE_OR_BATCH);
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
  ajv.addFormat('date-time', { type: 'string', validate: (s: string) => !Number.isNaN(Date.parse(s)) });
  ajv.addFormat(HTTP_URL, { type: 'string', validate: isHttpUrl });
  return ajv;
}

function isHttpUrl(text: string): boolean {
  // WHATWG URL parsing forgives "http:host" and "https:///host"; an address typed in config should not need that.
  if (!/^https?:\/\/[^/?#\s]/i.test(text)) return false;
  try {
    return new URL(text).hostname !== '';
  } catch {
    return false;
  }
}

const sharedAjv = createAjv();

/** Builds a checker for a schema; a one-or-batch union is checked along the branch the data's shape picks. */
export function compileValidator<S extends TSchema>(schema: S, ajv: Ajv = sharedAjv): Validator<Static<S>> {
  const raw = schema as Record<string, unknown>;
  if (raw[ONE_OR_BATCH] === true) {
    const [item, batch] = raw.anyOf as [TSchema, TSchema];
    const checkItem = ajv.compile(item);
    const checkBatch = ajv.compile(batch);
    return (data) => {
      if (Array.isArray(data)) return outcome(checkBatch, data);
      if (data !== null && typeof data === 'object') return outcome(checkItem, data);
      return { ok: false, error: 'body must be an object or an array' };
    };
  }
  const check = ajv.compile(schema);
  return (data) => outcome(check, data);
}

function outcome<T>(check: ValidateFunction, data: unknown): ValidationResult<T> {
  if (check(data)) return { ok: true, value: data as T };
  return { ok: false, error: describeErrors(check.errors ?? []) };
}

/** `/3/fields/weightKg` → `[3].fields.weightKg`. */
export function formatPath(instancePath: string, child?: string | number): string {
  const segments = instancePath.split('/').slice(1).map(unescapePointer);
  if (child !== undefined) segments.push(String(child));
  let out = '';
  for (const segment of segments) {
    out += /^\d+$/.test(segment) ? `[${segment}]` : out === '' ? segment : `.${segment}`;
  }
  return out;
}

/** How deep a request body may nest objects and arrays; ours need fewer than ten levels. */
export const MAX_BODY_DEPTH = 64;

// In a /u pattern a well-formed pair is one code point, so only a surrogate half standing alone matches.
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The first thing in a parsed JSON value that JSON allows but the store cannot keep, as a sentence naming where it is
 * (`formatPath`'s way, `body` for the value itself); undefined when there is none:
 * - U+0000 in a string or key: Postgres text cannot hold it;
 * - a lone UTF-16 surrogate (`"\ud800"`, firmware cutting a string inside an emoji): Postgres json refuses it, and
 *   text would silently turn it into U+FFFD, so two different broken ids became one;
 * - nesting deeper than `maxDepth`: nothing of ours needs it, and it would exhaust the stack of whatever walks it;
 * - a `__proto__` key, or `constructor` holding `prototype`: a later merge of the body could reach a prototype.
 * Walks with its own stack, so a hostile depth cannot overflow the call stack here either.
 */
export function unstorableJsonProblem(value: unknown, maxDepth = MAX_BODY_DEPTH): string | undefined {
  const textProblem = (text: string): string | undefined => {
    if (text.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
    const lone = LONE_SURROGATE.exec(text);
    if (lone) return `must be well-formed Unicode: it holds a lone UTF-16 surrogate (\\u${lone[0].charCodeAt(0).toString(16)})`;
    return undefined;
  };
  if (typeof value === 'string') {
    const problem = textProblem(value);
    return problem && `body ${problem}`;
  }
  if (value === null || typeof value !== 'object') return undefined;
  // A depth-first walk in document order over containers only; a trajectory upload holds hundreds of thousands of
  // numbers, so leaves cost no allocation and a path is spelled out only for a problem found.
  type Level = { container: object; keys: string[] | undefined; length: number; next: number };
  const open = (container: object): Level => {
    const keys = Array.isArray(container) ? undefined : Object.keys(container);
    return { container, keys, length: keys ? keys.length : (container as unknown[]).length, next: 0 };
  };
  const stack: Level[] = [open(value)];
  const pathTo = (depth: number) =>
    formatPath(
      stack
        .slice(0, depth)
        .map((level) => `/${String(level.keys ? level.keys[level.next - 1] : level.next - 1).replace(/~/g, '~0').replace(/\//g, '~1')}`)
        .join(''),
    ) || 'body';
  while (stack.length > 0) {
    const level = stack[stack.length - 1]!;
    if (level.next === level.length) {
      stack.pop();
      continue;
    }
    const key = level.keys?.[level.next];
    const child: unknown = key === undefined ? (level.container as unknown[])[level.next] : (level.container as Record<string, unknown>)[key];
    level.next++;
    const problem =
      (key === undefined ? undefined : (textProblem(key) ?? prototypeKeyProblem(key, child))) ?? (typeof child === 'string' ? textProblem(child) : undefined);
    if (problem) return `${pathTo(stack.length)} ${problem}`;
    if (child === null || typeof child !== 'object') continue;
    if (stack.length >= maxDepth) return `${pathTo(1)} is nested more than ${maxDepth} levels deep`;
    stack.push(open(child));
  }
  return undefined;
}

/** Keys through which a later merge of the body could reach an object's prototype. */
function prototypeKeyProblem(key: string, value: unknown): string | undefined {
  const reachesPrototype = key === '__proto__' || (key === 'constructor' && value !== null && typeof value === 'object' && Object.hasOwn(value, 'prototype'));
  return reachesPrototype ? 'must not be used as a property name: it could reach an object\'s prototype' : undefined;
}

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

const TYPE_NAMES: Record<string, string> = {
  number: 'a number',
  integer: 'an integer',
  string: 'a string',
  object: 'an object',
  array: 'an array',
  boolean: 'a boolean',
  null: 'null',
};

function typeName(type: unknown): string {
  const types = Array.isArray(type) ? type : [type];
  return types.map((t) => TYPE_NAMES[String(t)] ?? String(t)).join(' or ');
}

/** One clear sentence for the first failure Ajv found. */
export function describeErrors(errors: ErrorObject[]): string {
  // With allErrors off, a failed anyOf reports each branch's error first and the anyOf last.
  const anyOf = errors.find((e) => e.keyword === 'anyOf');
  if (anyOf) {
    const branchErrors = errors.filter((e) => e !== anyOf && e.instancePath === anyOf.instancePath);
    if (branchErrors.length > 0 && branchErrors.every((e) => e.keyword === 'const')) {
      const allowed = branchErrors.map((e) => JSON.stringify(e.params.allowedValue));
      return `${subject(anyOf.instancePath)} must be one of ${allowed.join(', ')}`;
    }
    const specific = branchErrors.find((e) => e.keyword !== 'type');
    if (specific) return describeError(specific);
    const types = branchErrors.map((e) => e.params.type as string);
    if (types.length > 0) return `${subject(anyOf.instancePath)} must be ${typeName(types)}`;
    return describeError(anyOf);
  }
  const first = errors[0];
  return first ? describeError(first) : 'body is invalid';
}

/** A configuration's problems as one message: one on the line, several each on a line of their own. */
export function invalidConfigMessage(problems: readonly string[]): string {
  if (problems.length === 1) return `invalid configuration: ${problems[0]}`;
  return `invalid configuration, ${problems.length} problems:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`;
}

const configAjv = createAjv({ allErrors: true });

/**
 * A checker for a configuration (a file, an environment): every problem at once, one sentence each, as a person
 * fixes them in one go; a request body stops at its first.
 */
export function compileConfigCheck<S extends TSchema>(schema: S): (data: unknown) => { ok: true; value: Static<S> } | { ok: false; problems: string[] } {
  const check = configAjv.compile(schema);
  return (data) => (check(data) ? { ok: true, value: data as Static<S> } : { ok: false, problems: describeEachError(check.errors ?? []) });
}

/**
 * One sentence per failure, for a validator built with `allErrors`: the errors of an anyOf's branches are said once,
 * as the anyOf, and a failure reported twice is said once.
 */
function describeEachError(errors: ErrorObject[]): string[] {
  const anyOfs = errors.filter((e) => e.keyword === 'anyOf');
  const insideAnyOf = (e: ErrorObject, anyOf: ErrorObject) => e !== anyOf && e.schemaPath.startsWith(`${anyOf.schemaPath}/`);
  const sentences = new Set<string>();
  for (const e of errors) {
    if (anyOfs.some((anyOf) => insideAnyOf(e, anyOf))) continue;
    sentences.add(e.keyword === 'anyOf' ? describeErrors([...errors.filter((b) => insideAnyOf(b, e)), e]) : describeError(e));
  }
  return [...sentences];
}

function subject(instancePath: string): string {
  return formatPath(instancePath) || 'body';
}

function describeError(e: ErrorObject): string {
  const at = subject(e.instancePath);
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return `${formatPath(e.instancePath, String(p.missingProperty))} is required`;
    case 'additionalProperties':
      return `${formatPath(e.instancePath, String(p.additionalProperty))} is not an allowed property`;
    case 'type':
      return `${at} must be ${typeName(p.type)}`;
    case 'maximum':
      // Firmware often keeps time in milliseconds; the bare limit (year 9999 in seconds) did not say so.
      if (p.limit === MAX_UNIX_SECONDS && typeof e.data === 'number' && e.data / 1000 <= MAX_UNIX_SECONDS) {
        return `${at} must be Unix time in seconds: ${String(e.data)} looks like milliseconds`;
      }
      return `${at} must be ${String(p.comparison)} ${String(p.limit)}`;
    case 'minimum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `${at} must be ${String(p.comparison)} ${String(p.limit)}`;
    case 'minItems':
      return `${at} must contain at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}`;
    case 'maxItems':
      return `${at} must contain at most ${String(p.limit)} items`;
    case 'minProperties': {
      const names = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      return `${at} must have at least one of ${names.join(', ')}`;
    }
    case 'maxProperties':
      return `${at} must have at most ${String(p.limit)} properties`;
    case 'minLength':
      return p.limit === 1 ? `${at} must not be empty` : `${at} must be at least ${String(p.limit)} characters long`;
    case 'maxLength':
      return `${at} must be at most ${String(p.limit)} characters long`;
    case 'enum':
      return `${at} must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `${at} must be ${JSON.stringify(p.allowedValue)}`;
    case 'format':
      return p.format === HTTP_URL ? `${at} must be an http:// or https:// address with a host name` : `${at} must be a valid ${String(p.format)}`;
    case 'pattern':
      return `${at} has an invalid format`;
    default:
      return `${at} ${e.message ?? 'is invalid'}`;
  }
}
