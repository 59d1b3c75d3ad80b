import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { buildTestApp, createUser, graphql, type TestApp } from './helper.ts';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ tokenCacheSeconds: 1 });
});
afterAll(() => t.close());

const reading = JSON.stringify({ hiveId: 'h', fields: { weightKg: 1 } });
const postMetric = (headers: Record<string, string>) =>
  t.app.inject({ method: 'POST', url: '/iot/v1/metrics', payload: reading, headers: { 'content-type': 'application/json', ...headers } });

describe('token placement', () => {
  it('refuses a request without a token, before looking at the body', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/iot/v1/metrics', payload: '{', headers: { 'content-type': 'application/json' } });
    expect(response.statusCode).toBe(401);
    expect(response.json().error).toMatch(/missing token/);
  });

  it('accepts the token as a bearer, in the token header and in the session cookie', async () => {
    const { token } = await createUser(t.app);
    expect((await postMetric({ authorization: `Bearer ${token}` })).statusCode).toBe(200);
    expect((await postMetric({ token })).statusCode).toBe(200);
    expect((await postMetric({ cookie: `service_session=${token}` })).statusCode).toBe(200);
  });

  it('refuses a malformed Authorization header, a garbage token and a token signed with another key', async () => {
    const { user } = await createUser(t.app);
    expect((await postMetric({ authorization: 'Basic abc' })).json()).toEqual({ error: 'Authorization header must be "Bearer <token>"' });
    expect((await postMetric({ authorization: 'Bearer not.a.jwt' })).statusCode).toBe(401);
    const forged = await new SignJWT({ scope: '*' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('hivegate')
      .setSubject(String(user.id))
      .setJti('00000000-0000-4000-8000-000000000000')
      .sign(new TextEncoder().encode('x'.repeat(48)));
    const response = await postMetric({ authorization: `Bearer ${forged}` });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({ error: 'token is invalid' });
  });

  it('refuses an expired token', async () => {
    const { token } = await createUser(t.app, { expiresAt: new Date(Date.now() - 1000) });
    const response = await postMetric({ authorization: `Bearer ${token}` });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({ error: 'token has expired' });
  });

  it('refuses a token lacking the scope with a 403', async () => {
    const { token } = await createUser(t.app, { scopes: ['read'] });
    const response = await postMetric({ authorization: `Bearer ${token}` });
    expect(response.statusCode).toBe(403);
    expect(response.json().error).toMatch(/"ingest" scope/);
  });
});

describe('revocation', () => {
  it('stops a revoked token within a few seconds', async () => {
    const { token, tokenId, auth } = await createUser(t.app);
    expect((await postMetric(auth)).statusCode).toBe(200);
    expect(await t.app.ctx.tokenRecords.revoke(tokenId)).toBe('revoked');
    // No notification on purpose: the cached status must expire on its own (TOKEN_CACHE_SECONDS = 1).
    const deadline = Date.now() + 5000;
    let status = 200;
    while (Date.now() < deadline && status === 200) {
      status = (await postMetric({ authorization: `Bearer ${token}` })).statusCode;
      if (status === 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(401);
    expect((await postMetric(auth)).json()).toEqual({ error: 'token has been revoked' });
  });

  it('stops a revoked token at once when the revocation is announced', async () => {
    const { tokenId, auth } = await createUser(t.app);
    expect((await postMetric(auth)).statusCode).toBe(200);
    await t.app.ctx.tokenRecords.revoke(tokenId);
    await t.app.ctx.tokens.forget(tokenId);
    expect((await postMetric(auth)).statusCode).toBe(401);
  });
});

describe('isolation between users', () => {
  it('shows each user only their own hives, series and totals', async () => {
    const alice = await createUser(t.app);
    const bob = await createUser(t.app);
    const now = Math.floor(Date.now() / 1000);
    await t.app.inject({ method: 'POST', url: '/iot/v1/metrics', headers: alice.auth, payload: { hiveId: 'shared-name', fields: { weightKg: 50 }, timestamp: now } });
    await t.app.inject({ method: 'POST', url: '/entrance/v1/movement', headers: alice.auth, payload: { hiveId: 'shared-name', boxId: 'box', beesIn: 9, beesOut: 4, timestamp: now } });
    await t.app.inject({ method: 'POST', url: '/iot/v1/metrics', headers: bob.auth, payload: { hiveId: 'bobs', fields: { weightKg: 10 }, timestamp: now } });

    const query = `query($from: DateTime!, $to: DateTime!) {
      hives { id lastReading { weightKg } }
      hiveMetrics(hiveId: "shared-name", from: $from, to: $to) { weightKg samples }
      entranceMovement(boxId: "box", from: $from, to: $to) { beesIn }
      entranceTotals { boxId beesIn }
    }`;
    const range = { from: new Date((now - 3600) * 1000).toISOString(), to: new Date((now + 3600) * 1000).toISOString() };
    const asAlice = await graphql(t.app, alice.token, query, range);
    expect(asAlice.errors).toBeUndefined();
    expect(asAlice.data).toMatchObject({
      hives: [{ id: 'shared-name', lastReading: { weightKg: 50 } }],
      hiveMetrics: [{ weightKg: 50, samples: 1 }],
      entranceMovement: [{ beesIn: 9 }],
      entranceTotals: [{ boxId: 'box', beesIn: 9 }],
    });
    const asBob = await graphql(t.app, bob.token, query, range);
    expect(asBob.data).toEqual({ hives: [{ id: 'bobs', lastReading: { weightKg: 10 } }], hiveMetrics: [], entranceMovement: [], entranceTotals: [] });
  });

  it('answers GraphQL without a token with UNAUTHENTICATED', async () => {
    const result = await graphql(t.app, undefined, '{ hives { id } }');
    expect(result.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect((await graphql(t.app, undefined, '{ me { id } }')).data).toEqual({ me: null });
  });
});
