import type { FastifyInstance } from 'fastify';
import { HttpError } from './errors.ts';

/**
 * JSON bodies are parsed here rather than by fastify's default parser, which answers every failure with the same
 * "body is not valid JSON" and drops what the parser said: a firmware writer needs "Unexpected end of JSON input" or
 * the position of the stray comma. Keys that could reach an object's prototype (`__proto__`, `constructor.prototype`)
 * are refused by name in the body check that follows (`unstorableJsonProblem`), where the default parser refused them
 * as invalid JSON without saying which.
 */
export function parseJsonBodies(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    // A byte-order mark, which some writers of UTF-8 put first (.NET, PowerShell), is no part of the JSON: the
    // default parser took such bodies, and JSON.parse alone refused them.
    const text = (body as string).replace(/^\uFEFF/, '');
    if (text.trim() === '') {
      done(new HttpError(400, 'body is required'), undefined);
      return;
    }
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      done(new HttpError(400, `body is not valid JSON: ${(err as Error).message}`), undefined);
    }
  });
}
