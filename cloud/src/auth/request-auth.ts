import type { FastifyRequest, onRequestHookHandler } from 'fastify';
import { grants, type Scope } from '@hivegate/shared';
import { HttpError } from '../http/errors.ts';
import { boxRefusal, coversBox } from './box-scope.ts';
import { AuthError, type Principal, type TokenService } from './tokens.ts';

export const SESSION_COOKIE = 'service_session';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/** The token from `Authorization: Bearer`, the `token` header the web clients use, or the session cookie. */
export function extractToken(request: FastifyRequest): string | undefined {
  const authorization = request.headers.authorization;
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match) throw new HttpError(401, 'Authorization header must be "Bearer <token>"');
    return match[1];
  }
  const header = request.headers.token;
  if (typeof header === 'string' && header.trim() !== '') return header.trim();
  const cookie = request.cookies?.[SESSION_COOKIE];
  return cookie || undefined;
}

/**
 * A page may open a websocket to any server, and the browser sends that server's cookies along without asking it
 * first (no CORS preflight); only the Origin header says which page it is. So a websocket whose user would come
 * from the session cookie alone must come from one of the `trustedOrigins` or this server's own origin; otherwise a
 * page of another origin (a sibling host of the same site, which SameSite=Lax lets the cookie reach) could read the
 * user's live sessions. Returns why the cookie is not accepted, or undefined. Clients without an Origin header are
 * not browsers and cannot be made to send someone's cookie.
 */
export function foreignOriginProblem(request: FastifyRequest, trustedOrigins: readonly string[]): string | undefined {
  const origin = request.headers.origin;
  if (origin === undefined || !request.cookies?.[SESSION_COOKIE]) return undefined;
  if (request.headers.authorization !== undefined || (typeof request.headers.token === 'string' && request.headers.token.trim() !== '')) return undefined;
  if (origin === `${request.protocol}://${request.host}` || trustedOrigins.includes(origin)) return undefined;
  return `the session cookie is not accepted from ${origin}: send a token in connection_init`;
}

export async function authenticateRequest(tokens: TokenService, request: FastifyRequest): Promise<Principal> {
  const token = extractToken(request);
  if (!token) throw new HttpError(401, 'missing token: send "Authorization: Bearer <token>"');
  try {
    return await tokens.verify(token);
  } catch (err) {
    if (err instanceof AuthError) throw new HttpError(401, err.message);
    throw err;
  }
}

/**
 * An onRequest hook: runs before the body is read, so an unauthenticated client learns that first. With several
 * scopes, any one of them will do.
 */
export function requireScope(tokens: TokenService, ...scopes: [Scope, ...Scope[]]): onRequestHookHandler {
  const named = scopes.map((scope) => `"${scope}"`).join(' or ');
  return async (request) => {
    const principal = await authenticateRequest(tokens, request);
    if (!scopes.some((scope) => grants(principal.scopes, scope))) throw new HttpError(403, `this token lacks the ${named} scope`);
    request.principal = principal;
  };
}

/** Device-scoped tokens may only speak for their own boxes. */
export function assertBoxAllowed(principal: Principal, boxId: string): void {
  if (!coversBox(principal, boxId)) throw new HttpError(403, boxRefusal(boxId));
}
