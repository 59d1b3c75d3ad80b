/**
 * Every GraphQL document the app sends, validated against the server's schema files. Operations of features that
 * are not on this server yet (the validation only says a field or type is missing) are skipped with the missing
 * name; they switch on by themselves when the schema gains it. Operations of deployed features must be valid.
 */
import { buildSchema, parse, validate, type GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { missingFeature, type Operation } from './graphql.ts';

const schemaFiles = import.meta.glob<string>('../../../src/graphql/schema/*.graphql', { query: '?raw', import: 'default', eager: true });
const modules = import.meta.glob<Record<string, unknown>>(['./*.ts', '!./*.test.ts'], { eager: true });

/** Features on the server today: their operations may never be skipped. */
const DEPLOYED = new Set(['Me', 'SignIn', 'SignUp', 'SignOut', 'ApiTokens', 'CreateApiToken', 'RevokeApiToken', 'Apiary', 'Hive', 'HiveMetrics', 'EntranceMovement', 'BoxToday']);

function isOperation(value: unknown): value is Operation<unknown, unknown> {
  return typeof value === 'object' && value !== null && 'document' in value && 'name' in value && 'kind' in value;
}

const sdl = Object.entries(schemaFiles)
  .sort(([a], [b]) => (a.endsWith('/base.graphql') ? -1 : b.endsWith('/base.graphql') ? 1 : a.localeCompare(b)))
  .map(([, text]) => text)
  .join('\n');
const schema = buildSchema(sdl);

const operations = Object.entries(modules).flatMap(([file, exports]) =>
  Object.values(exports)
    .filter(isOperation)
    .map((op) => ({ file, op })),
);

/** Fields below the root the app may find missing by design: the feature they carry comes with a later gateway. */
const OPTIONAL_FIELDS = new Set(['Box.device']);

/**
 * A feature counts as not deployed when what is missing is an operation (a root field), a type, or one of the
 * optional fields. A missing field inside an operation that exists is a mismatch and fails.
 */
function isUndeployed(missing: string): boolean {
  return /^(Query|Mutation|Subscription)(\.|$)/.test(missing) || !missing.includes('.') || OPTIONAL_FIELDS.has(missing);
}

function check(op: Operation<unknown, unknown>): { errors: readonly GraphQLError[]; missing?: string } {
  // Validation does not look at fields of a root type the schema lacks; without subscriptions there is nothing to check.
  if (op.kind === 'subscription' && !schema.getSubscriptionType()) return { errors: [], missing: 'Subscription' };
  const errors = validate(schema, parse(op.document));
  const missingNames = errors.map((e) => missingFeature([e]));
  const undeployed = errors.length > 0 && missingNames.every((name) => name !== undefined && isUndeployed(name));
  return { errors, missing: undeployed ? missingNames[0] : undefined };
}

describe('GraphQL documents of the web app', () => {
  it('are all found, with unique names', () => {
    expect(operations.length).toBeGreaterThanOrEqual(20);
    const names = operations.map(({ op }) => op.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of DEPLOYED) expect(names).toContain(name);
  });

  for (const { file, op } of operations) {
    const { errors, missing } = check(op);
    const skip = missing !== undefined && !DEPLOYED.has(op.name);
    it.skipIf(skip)(`${op.name} (${file}) is valid against the server schema${skip ? ` — skipped: the schema has no ${missing} yet` : ''}`, () => {
      expect(errors.map((e) => e.message)).toEqual([]);
    });
  }
});
