import { ALL_SCOPES, SCOPES } from '@hivegate/shared';
import mercurius from 'mercurius';
import { clientError, requireUser, type GraphQLContext, type Resolvers } from '../graphql/context.ts';
import { AccountError, type SignedIn } from './accounts.ts';
import { boxIdsProblem } from './box-ids.ts';
import { SESSION_COOKIE } from './request-auth.ts';
import { describeUserAgent } from './user-agent.ts';

function startCookieSession(ctx: GraphQLContext, session: SignedIn): SignedIn {
  ctx.reply.setCookie(SESSION_COOKIE, session.token, {
    httpOnly: true,
    sameSite: 'lax',
    secure: ctx.request.protocol === 'https',
    path: '/',
    expires: session.expiresAt,
  });
  return session;
}

async function accountCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    // The field lets a client mark the input at fault rather than the whole form.
    if (err instanceof AccountError) throw new mercurius.ErrorWithProps(err.message, { code: err.code, ...(err.field ? { field: err.field } : {}) }, 200);
    throw err;
  }
}

/**
 * Only a signed-in web session may see and end the user's sessions or change the password: an API token (whatever its
 * scopes) sits on a device, and one taken from it must not lock its owner out.
 */
async function requireWebSession(ctx: GraphQLContext) {
  const user = requireUser(ctx, 'read');
  if ((await ctx.services.tokenRecords.kindOf(user.tokenId)) !== 'session') {
    throw clientError('only a signed-in web session may manage sign-ins and the password, not an API token: sign in to the web app', 'FORBIDDEN');
  }
  return user;
}

const clientOf = (ctx: GraphQLContext) => describeUserAgent(ctx.request.headers['user-agent']);

/**
 * Only a full session (or an all-scopes token for every box) may list, mint or revoke tokens: a device token must not
 * breed more. A token limited to boxes minted one for every box, and revoked its owner's other tokens.
 */
function requireAccountOwner(ctx: GraphQLContext) {
  const user = requireUser(ctx, 'control');
  // "needs a signed-in session" was untrue: a full token for every box may manage tokens too.
  if (!user.scopes.includes(ALL_SCOPES)) throw clientError('managing tokens needs a signed-in session or a token with every scope ("*"): this token has only some', 'FORBIDDEN');
  if (user.boxIds !== null) throw clientError('a token limited to boxes cannot manage tokens: sign in, or use a token for every box', 'FORBIDDEN');
  return user;
}

export const accountResolvers: Resolvers = {
  Query: {
    apiTokens: (_root: unknown, _args: unknown, ctx: GraphQLContext) => ctx.services.tokenRecords.list(requireAccountOwner(ctx).userId),
    signUpOpen: (_root: unknown, _args: unknown, ctx: GraphQLContext) => ctx.services.config.signUp === 'open',
    webSessions: async (_root: unknown, _args: unknown, ctx: GraphQLContext) => {
      const session = await requireWebSession(ctx);
      return ctx.services.accounts.sessions(session.userId, session.tokenId);
    },
  },
  Mutation: {
    signUp: (_root: unknown, args: { login: string; password: string }, ctx: GraphQLContext) => {
      if (ctx.services.config.signUp === 'closed') throw clientError('sign-up is closed on this server: ask its administrator for an account', 'FORBIDDEN');
      return accountCall(async () => startCookieSession(ctx, await ctx.services.accounts.signUp(args.login.trim(), args.password, ctx.request.ip, clientOf(ctx))));
    },
    signIn: (_root: unknown, args: { login: string; password: string }, ctx: GraphQLContext) =>
      accountCall(async () => startCookieSession(ctx, await ctx.services.accounts.signIn(args.login.trim(), args.password, ctx.request.ip, clientOf(ctx)))),
    signOut: async (_root: unknown, _args: unknown, ctx: GraphQLContext) => {
      ctx.reply.clearCookie(SESSION_COOKIE, { path: '/' });
      if (!ctx.principal) return false;
      await ctx.services.accounts.signOut(ctx.principal.tokenId);
      return true;
    },
    createApiToken: async (_root: unknown, args: { name: string; scopes?: string[] | null; boxIds?: string[] | null }, ctx: GraphQLContext) => {
      const user = requireAccountOwner(ctx);
      const name = args.name.trim();
      if (name === '' || name.length > 100) throw clientError('name must be 1-100 characters');
      const scopes = args.scopes ?? ['ingest', 'device'];
      const unknown = scopes.filter((s) => s !== ALL_SCOPES && !(SCOPES as readonly string[]).includes(s));
      const known = [ALL_SCOPES, ...SCOPES].join(', ');
      if (scopes.length === 0) throw clientError(`scopes must name at least one of ${known}, or be left out for ingest and device`);
      if (unknown.length > 0) throw clientError(`scopes must be some of ${known}; not ${unknown.map((s) => JSON.stringify(s)).join(', ')}`);
      const boxIds = args.boxIds?.map(String) ?? null;
      // A token for no box could act for nothing: almost surely a client that meant "every box" (leave boxIds out).
      if (boxIds?.length === 0) throw clientError('boxIds must name at least one box, or be left out for every box');
      const boxProblem = boxIds && boxIdsProblem(boxIds, 'boxIds');
      if (boxProblem) throw clientError(boxProblem);
      const { token, tokenId } = await ctx.services.tokens.issue({ userId: user.userId, name, scopes, boxIds });
      const apiToken = (await ctx.services.tokenRecords.list(user.userId)).find((t) => t.id === tokenId);
      return { token, apiToken };
    },
    revokeApiToken: async (_root: unknown, args: { id: string }, ctx: GraphQLContext) => {
      const user = requireAccountOwner(ctx);
      if ((await ctx.services.tokenRecords.revoke(String(args.id), user.userId)) === 'missing') throw clientError('no such token');
      await ctx.services.tokens.forget(String(args.id));
      return true;
    },
    revokeWebSession: async (_root: unknown, args: { id: string }, ctx: GraphQLContext) => {
      const session = await requireWebSession(ctx);
      await accountCall(() => ctx.services.accounts.revokeSession(session.userId, session.tokenId, String(args.id)));
      return true;
    },
    signOutOtherSessions: async (_root: unknown, _args: unknown, ctx: GraphQLContext) => {
      const session = await requireWebSession(ctx);
      return ctx.services.accounts.signOutOtherSessions(session.userId, session.tokenId);
    },
    changePassword: async (_root: unknown, args: { currentPassword: string; newPassword: string }, ctx: GraphQLContext) => {
      const session = await requireWebSession(ctx);
      const otherSessionsSignedOut = await accountCall(() =>
        ctx.services.accounts.changePassword(session.userId, session.tokenId, args.currentPassword, args.newPassword, ctx.request.ip),
      );
      return { otherSessionsSignedOut };
    },
  },
};
