import type { FastifySchemaCompiler } from 'fastify';
import type { TSchema } from 'typebox';
import { compileValidator, createAjv } from '@hivegate/shared';

const ajv = createAjv();

/** Where in the request a failing field sits, unless it is the body, which is what clients expect by default. */
const PART_PREFIX: Record<string, string> = { querystring: 'query parameter ', params: 'path parameter ', headers: 'header ' };

/**
 * Fastify's default validator coerces types and silently drops unknown properties; the contract forbids both.
 * This one checks strictly with the shared rules and throws errors that name the field.
 */
export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = compileValidator(schema, ajv);
  const prefix = PART_PREFIX[httpPart ?? 'body'] ?? '';
  return (data: unknown) => {
    const result = check(data);
    if (result.ok) return { value: result.value };
    const error = new Error(prefix + result.error) as Error & { statusCode: number; code: string };
    error.statusCode = 400;
    error.code = 'FST_ERR_VALIDATION';
    return { error };
  };
};
