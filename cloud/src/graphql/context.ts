import mercurius from 'mercurius';
import { grants, type Scope } from '@hivegate/shared';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { boxRefusal, coversBox } from '../auth/box-scope.ts';
import type { Principal } from '../auth/tokens.ts';
import type { AppContext } from '../context.ts';

export interface GraphQLContext {
  services: AppContext;
  principal: Principal | null;
  /** Why a presented token was refused, reported when a resolver needs a user. */
  authProblem?: string;
  request: FastifyRequest;
  reply: FastifyReply;
}

/** A GraphQL error the client caused; `code` lands in `extensions.code`. */
export function clientError(message: string, code = 'BAD_USER_INPUT'): Error {
  return new mercurius.ErrorWithProps(message, { code }, 200);
}

/** The calling user, or an UNAUTHENTICATED / FORBIDDEN error. */
export function requireUser(context: GraphQLContext, scope: Scope = 'read'): Principal {
  const principal = context.principal;
  if (!principal) throw clientError(context.authProblem ?? 'authentication required: send a token', 'UNAUTHENTICATED');
  if (!grants(principal.scopes, scope)) throw clientError(`this token lacks the "${scope}" scope`, 'FORBIDDEN');
  return principal;
}

/** A FORBIDDEN error when the principal's token was made for other boxes. */
export function requireBox(principal: Principal, boxId: string): void {
  if (!coversBox(principal, boxId)) throw clientError(boxRefusal(boxId), 'FORBIDDEN');
}

/** Field resolvers of one capability; `never` lets each resolver declare its own source and argument types. */
export type FieldResolver = (source: never, args: never, context: GraphQLContext) => unknown;
/** A subscription field: `subscribe` returns an async iterator, `resolve` maps each item to the field's value. */
export interface SubscriptionResolver {
  subscribe: FieldResolver;
  resolve?: (payload: never, args: never, context: GraphQLContext) => unknown;
}
export type Resolvers = Record<string, Record<string, FieldResolver | SubscriptionResolver>>;
