import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type * as Passwords from '../src/auth/passwords.ts';
import { buildTestApp, createUser, graphql, type TestApp } from './helper.ts';

/** Password checks made, counted through the real check: the evidence that a throttle stopped the work, not just the answer. */
const passwordChecks = vi.hoisted(() => ({ count: 0 }));
vi.mock('../src/auth/passwords.ts', async (importOriginal) => {
  const original = await importOriginal<typeof Passwords>();
  return {
    ...original,
    verifyPassword: (...args: Parameters<typeof original.verifyPassword>) => {
      passwordChecks.count += 1;
      return original.verifyPassword(...args);
    },
  };
});

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

async function gql(query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const response = await t.app.inject({ method: 'POST', url: '/graphql', headers, payload: { query, variables } });
  return { response, body: response.json() as { data?: Record<string, any>; errors?: { message: string; extensions?: { code?: string } }[] } };
}

const SIGN_UP = `mutation($login: String!, $password: String!) { signUp(login: $login, password: $password) { token expiresAt user { login } } }`;
const SIGN_IN = `mutation($login: String!, $password: String!) { signIn(login: $login, password: $password) { token user { id login } } }`;

let signUpAddresses = 0;
/** Each from an address of its own: only a few sign-ups an hour are allowed from one. */
function signUp(variables: { login: string; password: string }, headers: Record<string, string> = {}) {
  return gql(SIGN_UP, variables, { 'x-forwarded-for': `192.0.2.${++signUpAddresses}`, ...headers });
}

function sessionCookie(response: { cookies: { name: string; value: string }[] }): string {
  const cookie = response.cookies.find((c) => c.name === 'service_session');
  return `service_session=${cookie!.value}`;
}

describe('accounts', () => {
  it('signs up with an HttpOnly SameSite session cookie that authenticates GraphQL', async () => {
    const { response, body } = await signUp({ login: 'maya', password: 'long enough password' });
    expect(body.data?.signUp.user).toEqual({ login: 'maya' });
    const setCookie = String(response.headers['set-cookie']);
    expect(setCookie).toMatch(/service_session=/);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Lax/);
    expect(setCookie).not.toMatch(/Secure/); // plain HTTP here; behind TLS (x-forwarded-proto https) it is Secure
    const me = await gql('{ me { login } }', {}, { cookie: sessionCookie(response) });
    expect(me.body.data).toEqual({ me: { login: 'maya' } });
  });

  it('marks the cookie Secure behind TLS', async () => {
    const { response } = await signUp({ login: 'tls-user', password: 'long enough password' }, { 'x-forwarded-proto': 'https' });
    expect(String(response.headers['set-cookie'])).toMatch(/Secure/);
  });

  it('refuses taken logins, short passwords and odd logins with clear messages', async () => {
    await signUp({ login: 'taken', password: 'long enough password' });
    expect((await signUp({ login: 'taken', password: 'long enough password' })).body.errors?.[0]?.message).toBe('that login is taken');
    expect((await signUp({ login: 'shorty', password: 'short' })).body.errors?.[0]?.message).toMatch(/at least 10 characters/);
    expect((await signUp({ login: 'a b', password: 'long enough password' })).body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('signs in with the right password only, and throttles guessing', async () => {
    await signUp({ login: 'guessme', password: 'the right password' });
    const ok = await gql(SIGN_IN, { login: 'guessme', password: 'the right password' });
    expect(ok.body.data?.signIn.user.login).toBe('guessme');
    const guesser = { 'x-forwarded-for': '198.51.100.7' };
    for (let i = 0; i < 10; i++) {
      const wrong = await gql(SIGN_IN, { login: 'guessme', password: `wrong ${i}` }, guesser);
      expect(wrong.body.errors?.[0]).toMatchObject({ message: 'login or password is wrong', extensions: { code: 'UNAUTHENTICATED' } });
    }
    const throttled = await gql(SIGN_IN, { login: 'guessme', password: 'the right password' }, guesser);
    expect(throttled.body.errors?.[0]).toMatchObject({ message: 'too many failed sign-ins; try again in 15 minutes', extensions: { code: 'TOO_MANY_ATTEMPTS' } });
    // Ten wrong passwords from anywhere locked the owner out everywhere for 15 minutes: only the guesser's address is.
    const owner = await gql(SIGN_IN, { login: 'guessme', password: 'the right password' }, { 'x-forwarded-for': '203.0.113.20' });
    expect(owner.body.data?.signIn.user.login).toBe('guessme');
    const stillThrottled = await gql(SIGN_IN, { login: 'guessme', password: 'the right password' }, guesser);
    expect(stillThrottled.body.errors?.[0]?.extensions?.code).toBe('TOO_MANY_ATTEMPTS');
    const unknown = await gql(SIGN_IN, { login: 'nobody-here', password: 'whatever else' });
    expect(unknown.body.errors?.[0]?.message).toBe('login or password is wrong');
  });

  it('stops guessing spread over many addresses at a higher limit for the login', async () => {
    await signUp({ login: 'spread', password: 'the right password' });
    // 100 wrong passwords from 100 addresses, recorded as sign-in does (100 password hashes would take a minute here).
    await t.app.ctx.db.query(`INSERT INTO login_failures (login, address) SELECT 'spread', '198.51.100.' || i FROM generate_series(1, 99) AS i`);
    const last = await gql(SIGN_IN, { login: 'spread', password: 'wrong again' }, { 'x-forwarded-for': '198.51.100.100' });
    expect(last.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const throttled = await gql(SIGN_IN, { login: 'spread', password: 'the right password' }, { 'x-forwarded-for': '203.0.113.99' });
    expect(throttled.body.errors?.[0]?.extensions?.code).toBe('TOO_MANY_ATTEMPTS');
  });

  // 200 wrong passwords sent at once from one address got 32 password checks, not 10: all were counted before any was recorded.
  it('checks no more passwords than the limit when guesses arrive all at once', async () => {
    await signUp({ login: 'parallel', password: 'the right password' });
    const before = passwordChecks.count;
    const guesser = { 'x-forwarded-for': '198.51.100.77' };
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => gql(SIGN_IN, { login: 'parallel', password: `wrong ${i}` }, guesser)));
    const codes = answers.map((a) => a.body.errors?.[0]?.extensions?.code);
    const checkedAtOnce = passwordChecks.count - before;
    expect(checkedAtOnce).toBeLessThanOrEqual(10);
    expect(codes.filter((c) => c === 'UNAUTHENTICATED')).toHaveLength(checkedAtOnce);
    // On a loaded machine some guesses wait past the database pool's limit and are turned away as busy, checking
    // nothing either: guesses one at a time then reach exactly the limit.
    if (checkedAtOnce === 10) expect(codes.filter((c) => c === 'TOO_MANY_ATTEMPTS')).toHaveLength(190);
    for (let guess = 0; guess <= 10 - checkedAtOnce; guess += 1) await gql(SIGN_IN, { login: 'parallel', password: `one more ${guess}` }, guesser);
    expect(passwordChecks.count - before).toBe(10);
    // The refused ones are not kept: they checked nothing, and would otherwise count against the owner's login everywhere.
    const { rows } = await t.app.ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM login_failures WHERE login = 'parallel'`);
    expect(rows[0]!.n).toBe(10);
  });

  // One request with 40 aliased signUp mutations made 40 accounts, each a 32 MiB password hash, past any per-request limit.
  it('refuses a second sign-up or sign-in in one operation before any of it runs', async () => {
    const checksBefore = passwordChecks.count;
    const aliased = `mutation { ${Array.from({ length: 40 }, (_, i) => `a${i}: signUp(login: "alias${i}", password: "long enough password") { token }`).join(' ')} }`;
    const mixed = `mutation { signUp(login: "alias-mixed", password: "long enough password") { token } signIn(login: "maya", password: "long enough password") { token } }`;
    const spread = `mutation { ...Up ...Up2 } fragment Up on Mutation { signUp(login: "alias-f1", password: "long enough password") { token } }
      fragment Up2 on Mutation { other: signUp(login: "alias-f2", password: "long enough password") { token } }`;
    for (const [label, query, times] of [['aliases', aliased, 40], ['sign-up and sign-in', mixed, 2], ['fragments', spread, 2]] as const) {
      const { body } = await gql(query);
      expect(body.data ?? null, label).toBeNull();
      expect(body.errors?.[0], label).toMatchObject({
        message: `an operation may sign up, sign in or change the password only once; this one does so ${times} times (aliases counted): send each in a request of its own`,
        extensions: { code: 'BAD_USER_INPUT' },
      });
    }
    const { rows } = await t.app.ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM users WHERE login LIKE 'alias%'`);
    expect(rows[0]!.n).toBe(0);
    expect(passwordChecks.count).toBe(checksBefore);
  });

  // Nothing limited sign-ups: one client could make any number of accounts, each costing a 32 MiB password hash.
  it('allows five sign-ups an hour from one address, even sent at once', async () => {
    const from = { 'x-forwarded-for': '203.0.113.50' };
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => gql(SIGN_UP, { login: `burst${i}`, password: 'long enough password' }, from)));
    expect(answers.filter((a) => a.body.data?.signUp)).toHaveLength(5);
    const refused = answers.flatMap((a) => a.body.errors ?? []);
    expect(refused).toHaveLength(3);
    for (const error of refused) expect(error).toMatchObject({ message: 'too many sign-ups from this address; try again in 60 minutes', extensions: { code: 'TOO_MANY_ATTEMPTS' } });
    const { rows } = await t.app.ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM users WHERE login LIKE 'burst%'`);
    expect(rows[0]!.n).toBe(5);
    expect((await signUp({ login: 'burst-elsewhere', password: 'long enough password' })).body.data?.signUp.user).toEqual({ login: 'burst-elsewhere' });
  });

  // Any visitor could make an account, with no way for a private server to stop it.
  it('refuses sign-ups when SIGNUP is closed, and says so to the web app', async () => {
    expect((await gql('{ signUpOpen }')).body.data).toEqual({ signUpOpen: true });
    const closed = await buildTestApp({ signUp: 'closed' }, { url: t.databaseUrl });
    try {
      const ask = (query: string, variables: Record<string, unknown> = {}) => closed.app.inject({ method: 'POST', url: '/graphql', payload: { query, variables } }).then((r) => r.json());
      expect((await ask('{ signUpOpen }')).data).toEqual({ signUpOpen: false });
      const refused = await ask(SIGN_UP, { login: 'latecomer', password: 'long enough password' });
      expect(refused.errors?.[0]).toMatchObject({ message: 'sign-up is closed on this server: ask its administrator for an account', extensions: { code: 'FORBIDDEN' } });
      expect(await t.app.ctx.users.findByLogin('latecomer')).toBeUndefined();
      // Existing accounts still sign in.
      expect((await ask(SIGN_IN, { login: 'maya', password: 'long enough password' })).data?.signIn.user.login).toBe('maya');
    } finally {
      await closed.close();
    }
  });

  // Behind no proxy, any client could name any address in X-Forwarded-For and so escape the per-address limit.
  it('believes X-Forwarded-For only from a trusted proxy', async () => {
    const strict = await buildTestApp({ trustProxy: false });
    try {
      await strict.app.inject({ method: 'POST', url: '/graphql', payload: { query: SIGN_UP, variables: { login: 'direct', password: 'the right password' } } });
      for (let i = 0; i < 10; i++) {
        await strict.app.inject({ method: 'POST', url: '/graphql', headers: { 'x-forwarded-for': `198.51.100.${i}` }, payload: { query: SIGN_IN, variables: { login: 'direct', password: `wrong ${i}` } } });
      }
      const answer = await strict.app.inject({ method: 'POST', url: '/graphql', headers: { 'x-forwarded-for': '198.51.100.200' }, payload: { query: SIGN_IN, variables: { login: 'direct', password: 'the right password' } } });
      expect(answer.json().errors?.[0]?.extensions?.code).toBe('TOO_MANY_ATTEMPTS');
    } finally {
      await strict.close();
    }
  });

  it('signs out by revoking the session', async () => {
    const { response } = await signUp({ login: 'leaver', password: 'long enough password' });
    const cookie = sessionCookie(response);
    expect((await gql('mutation { signOut }', {}, { cookie })).body.data).toEqual({ signOut: true });
    expect((await gql('{ hives { id } }', {}, { cookie })).body.errors?.[0]?.message).toBe('token has been revoked');
  });
});

describe('API tokens from the profile', () => {
  it('creates a device token shown once, lists it with last use, and revokes it', async () => {
    const { body } = await signUp({ login: 'keeper', password: 'long enough password' });
    const session = body.data!.signUp.token as string;
    const created = await graphql(t.app, session, `mutation { createApiToken(name: "scale", scopes: ["ingest"]) { token apiToken { id name scopes lastUsedAt } } }`);
    const { token, apiToken } = (created.data as any).createApiToken;
    expect(apiToken).toMatchObject({ name: 'scale', scopes: ['ingest'], lastUsedAt: null });

    const posted = await t.app.inject({ method: 'POST', url: '/iot/v1/metrics', headers: { authorization: `Bearer ${token}` }, payload: { hiveId: 1, fields: { weightKg: 2 } } });
    expect(posted.statusCode).toBe(200);
    await new Promise((r) => setTimeout(r, 100)); // last use is recorded off the request path
    const listed = await graphql(t.app, session, '{ apiTokens { id name lastUsedAt revokedAt } }');
    expect((listed.data as any).apiTokens).toEqual([{ id: apiToken.id, name: 'scale', lastUsedAt: expect.any(String), revokedAt: null }]);

    expect((await graphql(t.app, session, `mutation { revokeApiToken(id: "${apiToken.id}") }`)).data).toEqual({ revokeApiToken: true });
    const after = await t.app.inject({ method: 'POST', url: '/iot/v1/metrics', headers: { authorization: `Bearer ${token}` }, payload: { hiveId: 1, fields: { weightKg: 2 } } });
    expect(after.statusCode).toBe(401);
    // A second revoke (a client retrying after a lost answer) was refused as "no such active token".
    expect((await graphql(t.app, session, `mutation { revokeApiToken(id: "${apiToken.id}") }`)).data).toEqual({ revokeApiToken: true });
    expect((await graphql(t.app, session, `mutation { revokeApiToken(id: "00000000-0000-4000-8000-000000000000") }`)).errors?.[0]?.message).toBe('no such token');
    expect((await graphql(t.app, session, `mutation { revokeApiToken(id: "not-a-token") }`)).errors?.[0]?.message).toBe('no such token');
  });

  // scopes: [] got "scopes must be some of …", and boxIds: [] made a token that could act for no box at all.
  it('explains empty or unknown scopes and refuses an empty box list', async () => {
    const owner = await createUser(t.app);
    const create = (args: string) => graphql(t.app, owner.token, `mutation { createApiToken(name: "cam", ${args}) { token } }`);
    expect((await create('scopes: []')).errors?.[0]?.message).toBe('scopes must name at least one of *, ingest, device, read, control, or be left out for ingest and device');
    expect((await create('scopes: ["ingest", "admin"]')).errors?.[0]?.message).toBe('scopes must be some of *, ingest, device, read, control; not "admin"');
    expect((await create('boxIds: []')).errors?.[0]?.message).toBe('boxIds must name at least one box, or be left out for every box');
    expect((await create('boxIds: ["b1"]')).data?.createApiToken).toMatchObject({ token: expect.any(String) });
  });

  // A 300-character box id made a token although movement ingest refuses box ids over 128 characters.
  it('refuses a box id that ingest would refuse, naming it', async () => {
    const owner = await createUser(t.app);
    const long = 'b'.repeat(300);
    const result = await graphql(t.app, owner.token, `mutation ($boxIds: [ID!]) { createApiToken(name: "cam", boxIds: $boxIds) { token } }`, { boxIds: ['gate-1', long] });
    expect(result.errors?.[0]).toMatchObject({ message: `boxIds[1] "${'b'.repeat(40)}…" is not a box id: it must be at most 128 characters long`, extensions: { code: 'BAD_USER_INPUT' } });
    expect((await graphql(t.app, owner.token, '{ apiTokens { id } }')).data).toEqual({ apiTokens: [{ id: owner.tokenId }] });
  });

  it('does not let a device token mint tokens or revoke another user\'s', async () => {
    const device = await createUser(t.app, { scopes: ['ingest', 'device', 'control'] });
    const minted = await graphql(t.app, device.token, `mutation { createApiToken(name: "more") { token } }`);
    // The refusal said a signed-in session was needed, though a full "*" token for every box may manage tokens too.
    expect(minted.errors?.[0]).toMatchObject({
      message: 'managing tokens needs a signed-in session or a token with every scope ("*"): this token has only some',
      extensions: { code: 'FORBIDDEN' },
    });
    const full = await createUser(t.app, { scopes: ['*'] });
    expect((await graphql(t.app, full.token, `mutation { createApiToken(name: "by script") { token } }`)).data?.createApiToken).toMatchObject({ token: expect.any(String) });
    const other = await createUser(t.app);
    const mallory = await createUser(t.app);
    const revoked = await graphql(t.app, mallory.token, `mutation { revokeApiToken(id: "${other.tokenId}") }`);
    expect(revoked.errors?.[0]?.message).toBe('no such token');
    expect((await graphql(t.app, other.token, '{ apiTokens { revokedAt } }')).data).toEqual({ apiTokens: [{ revokedAt: null }] });
  });

  // A token with every scope but limited to one box minted a token for every box, listed and revoked the others.
  it('does not let a token limited to boxes manage tokens, whatever its scopes', async () => {
    const owner = await createUser(t.app, { scopes: ['*'], boxIds: ['b1'] });
    const refusal = 'a token limited to boxes cannot manage tokens: sign in, or use a token for every box';
    for (const operation of ['mutation { createApiToken(name: "escalated", scopes: ["*"]) { token } }', '{ apiTokens { id } }', `mutation { revokeApiToken(id: "${owner.tokenId}") }`]) {
      const result = await graphql(t.app, owner.token, operation);
      expect(result.errors?.[0], operation).toMatchObject({ message: refusal, extensions: { code: 'FORBIDDEN' } });
    }
  });
});

describe('sign-ins and the password, from the profile', () => {
  const FIREFOX_ON_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0';
  const CHROME_ON_ANDROID = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36';
  const WEB_SESSIONS = '{ webSessions { id client createdAt lastUsedAt expiresAt current } }';
  const CHANGE_PASSWORD = `mutation($currentPassword: String!, $newPassword: String!) {
    changePassword(currentPassword: $currentPassword, newPassword: $newPassword) { otherSessionsSignedOut } }`;

  /** A new account signed in twice: from Firefox on Windows (`first`) and Chrome on Android (`second`), each a cookie. */
  async function signedInTwice(login: string, password = 'the first password') {
    const first = sessionCookie((await signUp({ login, password }, { 'user-agent': FIREFOX_ON_WINDOWS })).response);
    const second = sessionCookie((await gql(SIGN_IN, { login, password }, { 'user-agent': CHROME_ON_ANDROID, 'x-forwarded-for': '203.0.113.140' })).response);
    return { first, second };
  }

  const stillSignedIn = async (cookie: string) => (await gql('{ hives { id } }', {}, { cookie })).body.errors?.[0]?.message ?? 'signed in';

  // apiTokens listed only API tokens: a beekeeper could not see where else they were signed in.
  it('lists the web sessions with their browser, marking the current one and showing no token', async () => {
    const { first, second } = await signedInTwice('sessions-listed');
    const { body } = await gql(WEB_SESSIONS, {}, { cookie: first });
    const sessions = body.data?.webSessions as { client: string; current: boolean; expiresAt: string }[];
    expect(sessions.map((s) => [s.client, s.current]).sort()).toEqual([
      ['Chrome on Android', false],
      ['Firefox on Windows', true],
    ]);
    for (const session of sessions) expect(Date.parse(session.expiresAt)).toBeGreaterThan(Date.now() + 29 * 86_400_000);
    expect(JSON.stringify(body)).not.toContain(first.split('=')[1]);
    expect(JSON.stringify(body)).not.toContain(second.split('=')[1]);
    // Signed out sessions are no longer listed.
    await gql('mutation { signOut }', {}, { cookie: second });
    expect(((await gql(WEB_SESSIONS, {}, { cookie: first })).body.data?.webSessions as unknown[]).length).toBe(1);
  });

  // A beekeeper who suspected a stolen cookie could sign out only in the browser that held it.
  it('signs out another session, refuses the current one and ids that are not the user\'s sessions', async () => {
    const { first, second } = await signedInTwice('sessions-revoked');
    const listed = (await gql(WEB_SESSIONS, {}, { cookie: first })).body.data?.webSessions as { id: string; current: boolean }[];
    const other = listed.find((s) => !s.current)!;
    const current = listed.find((s) => s.current)!;
    const REVOKE = 'mutation($id: ID!) { revokeWebSession(id: $id) }';
    expect((await gql(REVOKE, { id: other.id }, { cookie: first })).body.data).toEqual({ revokeWebSession: true });
    expect(await stillSignedIn(second)).toBe('token has been revoked');
    expect(await stillSignedIn(first)).toBe('signed in');
    // Again (a retry after a lost answer) is no error.
    expect((await gql(REVOKE, { id: other.id }, { cookie: first })).body.data).toEqual({ revokeWebSession: true });
    expect((await gql(REVOKE, { id: current.id }, { cookie: first })).body.errors?.[0]).toMatchObject({
      message: 'id is this session: sign out instead (signOut) to end it',
      extensions: { code: 'BAD_USER_INPUT', field: 'id' },
    });
    const stranger = await signedInTwice('sessions-stranger');
    const strangers = (await gql(WEB_SESSIONS, {}, { cookie: stranger.first })).body.data?.webSessions as { id: string }[];
    const device = await createUser(t.app);
    for (const id of [strangers[0]!.id, device.tokenId, 'not-a-session']) {
      expect((await gql(REVOKE, { id }, { cookie: first })).body.errors?.[0], id).toMatchObject({
        message: 'id names no web session of yours',
        extensions: { code: 'BAD_USER_INPUT', field: 'id' },
      });
    }
    expect(await stillSignedIn(stranger.first)).toBe('signed in');
  });

  it('signs out every session but the current one', async () => {
    const { first, second } = await signedInTwice('sessions-everywhere');
    const third = sessionCookie((await gql(SIGN_IN, { login: 'sessions-everywhere', password: 'the first password' })).response);
    expect((await gql('mutation { signOutOtherSessions }', {}, { cookie: first })).body.data).toEqual({ signOutOtherSessions: 2 });
    expect(await stillSignedIn(second)).toBe('token has been revoked');
    expect(await stillSignedIn(third)).toBe('token has been revoked');
    expect(await stillSignedIn(first)).toBe('signed in');
    expect((await gql('mutation { signOutOtherSessions }', {}, { cookie: first })).body.data).toEqual({ signOutOtherSessions: 0 });
  });

  // Only the admin CLI could set a password (signing out every session); a beekeeper who signed up could never change it.
  it('changes the password, signing out the other sessions and keeping the current one and the API tokens', async () => {
    const { first, second } = await signedInTwice('changer');
    const device = (await gql(`mutation { createApiToken(name: "scale") { token } }`, {}, { cookie: first })).body.data?.createApiToken.token as string;
    const changed = await gql(CHANGE_PASSWORD, { currentPassword: 'the first password', newPassword: 'the second password' }, { cookie: first });
    expect(changed.body.data).toEqual({ changePassword: { otherSessionsSignedOut: 1 } });
    expect(await stillSignedIn(second)).toBe('token has been revoked');
    expect(await stillSignedIn(first)).toBe('signed in');
    const posted = await t.app.inject({ method: 'POST', url: '/iot/v1/metrics', headers: { authorization: `Bearer ${device}` }, payload: { hiveId: 1, fields: { weightKg: 2 } } });
    expect(posted.statusCode).toBe(200);
    expect((await gql(SIGN_IN, { login: 'changer', password: 'the first password' })).body.errors?.[0]?.message).toBe('login or password is wrong');
    expect((await gql(SIGN_IN, { login: 'changer', password: 'the second password' })).body.data?.signIn.user.login).toBe('changer');
  });

  it('refuses a weak or unchanged new password and a wrong current one, naming the field, and changes nothing', async () => {
    const { first, second } = await signedInTwice('careful');
    const checksBefore = passwordChecks.count;
    const attempt = (currentPassword: string, newPassword: string) => gql(CHANGE_PASSWORD, { currentPassword, newPassword }, { cookie: first });
    expect((await attempt('the first password', 'too short')).body.errors?.[0]).toMatchObject({
      message: 'newPassword must be at least 10 characters long',
      extensions: { code: 'BAD_USER_INPUT', field: 'newPassword' },
    });
    expect((await attempt('the first password', 'x'.repeat(201))).body.errors?.[0]?.message).toBe('newPassword must be at most 200 characters long');
    expect((await attempt('the first password', 'the first password')).body.errors?.[0]?.message).toBe('newPassword must differ from currentPassword');
    // A weak new password is refused before the current one is checked: no hash spent, no failure counted.
    expect(passwordChecks.count).toBe(checksBefore);
    // Not UNAUTHENTICATED, which the web app takes to mean that its session has ended.
    expect((await attempt('not the password', 'the second password')).body.errors?.[0]).toMatchObject({
      message: 'currentPassword is wrong',
      extensions: { code: 'BAD_USER_INPUT', field: 'currentPassword' },
    });
    expect(await stillSignedIn(first)).toBe('signed in');
    expect(await stillSignedIn(second)).toBe('signed in');
    expect((await gql(SIGN_IN, { login: 'careful', password: 'the first password' })).body.data?.signIn.user.login).toBe('careful');
  });

  // A stolen session must not become a way around the sign-in throttle to guess its owner's password.
  it('counts a wrong current password as a failed sign-in, under the same limit', async () => {
    const { first } = await signedInTwice('throttled');
    const from = { cookie: first, 'x-forwarded-for': '198.51.100.150' };
    for (let i = 0; i < 5; i++) {
      const wrong = await gql(CHANGE_PASSWORD, { currentPassword: `wrong ${i}`, newPassword: 'the second password' }, from);
      expect(wrong.body.errors?.[0]?.message).toBe('currentPassword is wrong');
    }
    for (let i = 5; i < 10; i++) {
      const wrong = await gql(SIGN_IN, { login: 'throttled', password: `wrong ${i}` }, { 'x-forwarded-for': '198.51.100.150' });
      expect(wrong.body.errors?.[0]?.message).toBe('login or password is wrong');
    }
    const checksBefore = passwordChecks.count;
    const refused = await gql(CHANGE_PASSWORD, { currentPassword: 'the first password', newPassword: 'the second password' }, from);
    expect(refused.body.errors?.[0]).toMatchObject({ message: 'too many failed sign-ins; try again in 15 minutes', extensions: { code: 'TOO_MANY_ATTEMPTS' } });
    expect(passwordChecks.count).toBe(checksBefore);
    expect((await gql(SIGN_IN, { login: 'throttled', password: 'the first password' }, { 'x-forwarded-for': '198.51.100.150' })).body.errors?.[0]?.extensions?.code).toBe('TOO_MANY_ATTEMPTS');
    // The session itself is fine, and from another address the change goes through.
    const elsewhere = await gql(CHANGE_PASSWORD, { currentPassword: 'the first password', newPassword: 'the second password' }, { cookie: first, 'x-forwarded-for': '203.0.113.151' });
    expect(elsewhere.body.data).toEqual({ changePassword: { otherSessionsSignedOut: 1 } });
  });

  it('refuses API tokens, even one with every scope, and an operation that changes the password twice', async () => {
    const owner = await createUser(t.app);
    const refusal = 'only a signed-in web session may manage sign-ins and the password, not an API token: sign in to the web app';
    const operations = [
      WEB_SESSIONS,
      'mutation { signOutOtherSessions }',
      `mutation { revokeWebSession(id: "${owner.tokenId}") }`,
      'mutation { changePassword(currentPassword: "whatever it is", newPassword: "a new password") { otherSessionsSignedOut } }',
    ];
    for (const operation of operations) {
      expect((await graphql(t.app, owner.token, operation)).errors?.[0], operation).toMatchObject({ message: refusal, extensions: { code: 'FORBIDDEN' } });
    }
    expect((await graphql(t.app, undefined, WEB_SESSIONS)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    const { first } = await signedInTwice('twice-in-one');
    const twice = `mutation { a: changePassword(currentPassword: "the first password", newPassword: "the second password") { otherSessionsSignedOut }
      b: changePassword(currentPassword: "the second password", newPassword: "the third password") { otherSessionsSignedOut } }`;
    expect((await gql(twice, {}, { cookie: first })).body.errors?.[0]?.message).toBe(
      'an operation may sign up, sign in or change the password only once; this one does so 2 times (aliases counted): send each in a request of its own',
    );
  });
});
