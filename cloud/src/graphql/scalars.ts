import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';
import { isIsoDate } from '../telemetry/buckets.ts';

const ISO_WITH_ZONE = /(Z|[+-]\d{2}:?\d{2})$/i;
// Coded as every other client mistake; graphql-js keeps the code when it names the variable that carried the value.
const badInput = (message: string) => new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });

/** Parses an ISO-8601 instant; devices send local-looking strings without a zone, which are read as UTC. */
export function parseInstant(value: unknown, what = 'DateTime'): Date {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}/.test(value)) {
    throw badInput(`${what} must be an ISO-8601 string such as 2026-05-01T12:00:00Z`);
  }
  const text = /T\d{2}:\d{2}/.test(value) && !ISO_WITH_ZONE.test(value) ? `${value}Z` : value;
  const date = new Date(text);
  // The Date parser rolls 2026-02-30 over to March 2: the calendar date as written must exist.
  if (Number.isNaN(date.getTime()) || !isIsoDate(value.slice(0, 10))) throw badInput(`${what} "${value}" is not a valid date`);
  return date;
}

export const DateTimeScalar = new GraphQLScalarType({
  name: 'DateTime',
  serialize(value) {
    if (value instanceof Date) return value.toISOString();
    if (typeof value === 'string' || typeof value === 'number') return new Date(value).toISOString();
    throw new GraphQLError('DateTime cannot represent this value');
  },
  parseValue: (value) => parseInstant(value),
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING) throw badInput('DateTime must be a string');
    return parseInstant(ast.value);
  },
});
