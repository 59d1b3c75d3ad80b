import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GraphQLError } from 'graphql';
import mercurius, { type IResolvers, type MercuriusLoaders } from 'mercurius';
import { readdirSync, readFileSync } from 'node:fs';
import { costlyMutationsRule } from './costly-mutations-rule.ts';
import { authenticateRequest, foreignOriginProblem } from '../auth/request-auth.ts';
import { AuthError } from '../auth/tokens.ts';
import type { AppContext } from '../context.ts';
import { HttpError } from '../http/errors.ts';
import type { GraphQLContext, Resolvers } from './context.ts';
import { noNulInStringsRule } from './nul-strings.ts';
import { queryLimitsRule } from './query-limits.ts';
import { DateTimeScalar } from './scalars.ts';
import { graphqlUploads } from '../video/upload-plugin.ts';
import { isStorageFault, isSystemError, STORAGE_UNAVAILABLE } from '../storage/faults.ts';

const SCHEMA_DIR = new URL('./schema/', import.meta.url);

/** The SDL files, `base.graphql` first: every capability extends its Query and Mutation. */
export function loadSchema(): string {
  const files = readdirSync(SCHEMA_DIR).filter((f) => f.endsWith('.graphql'));
  files.sort((a, b) => (a === 'base.graphql' ? -1 : b === 'base.graphql' ? 1 : a.localeCompare(b)));
  return files.map((f) => readFileSync(new URL(f, SCHEMA_DIR), 'utf8')).join('\n');
}

/** Merges the per-type maps of field functions (resolvers or loaders) that each capability gives. */
export function mergeByType<T>(...parts: object[]): T {
  const merged: Record<string, Record<string, unknown>> = {};
  for (const part of parts) {
    for (const [typeName, fields] of Object.entries(part)) {
      merged[typeName] = { ...(merged[typeName] ?? {}), ...(fields as Record<string, unknown>) };
    }
  }
  return merged as T;
}

/** A request may carry no token (sign-in) or a refused one; resolvers that need a user report which. */
async function principalOf(ctx: AppContext, request: FastifyRequest): Promise<Pick<GraphQLContext, 'principal' | 'authProblem'>> {
  // A multipart request was authenticated before its body was read (upload-plugin.ts).
  if (request.principal) return { principal: request.principal };
  try {
    return { principal: await authenticateRequest(ctx.tokens, request) };
  } catch (err) {
    if (err instanceof HttpError && err.statusCode === 401) {
      return { principal: null, authProblem: err.message.startsWith('missing token') ? undefined : err.message };
    }
    throw err;
  }
}

/** A websocket client's token from its `connection_init` payload: `token`, `Authorization` (Bearer) or the same inside `headers`. */
export function connectionInitToken(payload: unknown): string | undefined {
  if (payload === null || typeof payload !== 'object') return undefined;
  const p = payload as Record<string, unknown>;
  const headers = (p.headers !== null && typeof p.headers === 'object' ? p.headers : {}) as Record<string, unknown>;
  for (const value of [p.token, p.Authorization, p.authorization, headers.token, headers.Authorization, headers.authorization]) {
    if (typeof value === 'string' && value.trim() !== '') return value.trim().replace(/^Bearer\s+/i, '');
  }
  return undefined;
}

/** A Postgres (or embedded PGlite) error: it carries a SQLSTATE and a severity. */
function isDatabaseError(error: unknown): boolean {
  const e = error as { code?: unknown; severity?: unknown } | null | undefined;
  return typeof e?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) && typeof e.severity === 'string';
}

/**
 * A fault of the server's reached clients in its own words: the database's "integer out of range" under the hive
 * page's traffic chart (nothing a beekeeper can act on, and the schema told to a stranger), or the file system's
 * "ENOENT: no such file or directory, mkdir '/srv/…/tmp'" (a server path), logged at info only. It is logged at error
 * here, and the client reads what failed, not where.
 */
function maskServerFault(error: GraphQLError, log: FastifyRequest['log']): GraphQLError {
  const original = error.originalError;
  const database = isDatabaseError(original);
  if (!database && !isSystemError(original)) return error;
  const storage = !database && isStorageFault(original);
  log.error({ err: original, path: error.path }, database ? 'database error in a GraphQL resolver' : storage ? 'storage is unavailable' : 'GraphQL resolver failed');
  const message = database ? 'internal server error: the server could not read its data; it has logged the fault' : storage ? STORAGE_UNAVAILABLE : 'internal server error';
  return new GraphQLError(message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    extensions: { code: storage ? 'STORAGE_UNAVAILABLE' : 'INTERNAL_SERVER_ERROR' },
  });
}

export async function graphqlPlugin(app: FastifyInstance, { ctx, resolvers, loaders }: { ctx: AppContext; resolvers: Resolvers[]; loaders: MercuriusLoaders<GraphQLContext>[] }) {
  const baseResolvers: IResolvers = {
    DateTime: DateTimeScalar,
    Query: {
      me: (_root: unknown, _args: unknown, context: GraphQLContext) =>
        context.principal ? ctx.users.findById(context.principal.userId) : null,
    },
  } as IResolvers;
  await app.register(graphqlUploads, { ctx });
  const trustedOrigins = [...(ctx.config.publicUrl ? [new URL(ctx.config.publicUrl).origin] : []), ...ctx.config.corsOrigins];
  await app.register(mercurius, {
    schema: loadSchema(),
    resolvers: mergeByType<IResolvers>(baseResolvers, ...resolvers),
    loaders: mergeByType<MercuriusLoaders>(...loaders),
    path: '/graphql',
    graphiql: false,
    validationRules: [queryLimitsRule(), noNulInStringsRule, costlyMutationsRule],
    errorFormatter: (execution, context) => {
      const log = context.reply?.log ?? app.log;
      const errors = execution.errors?.map((error) => maskServerFault(error, log));
      return mercurius.defaultErrorFormatter(errors ? { ...execution, errors } : execution, context);
    },
    context: async (request, reply): Promise<GraphQLContext> => ({ services: ctx, request, reply, ...(await principalOf(ctx, request)) }),
    // Subscriptions over websocket: the user comes from the upgrade request (cookie, headers) or, as browsers
    // cannot set headers on a websocket, from the token in the connection_init payload, which wins when present.
    // The cookie alone counts only from this server's own pages (or trusted origins).
    subscription: {
      context: async (_socket, request) => {
        const refused = foreignOriginProblem(request, trustedOrigins);
        return { services: ctx, request, ...(refused ? { principal: null, authProblem: refused } : await principalOf(ctx, request)) };
      },
      onConnect: async ({ payload }) => {
        const token = connectionInitToken(payload);
        if (!token) return true;
        try {
          return { principal: await ctx.tokens.verify(token), authProblem: undefined };
        } catch (err) {
          if (err instanceof AuthError) return { principal: null, authProblem: err.message };
          throw err;
        }
      },
    },
  });
}
