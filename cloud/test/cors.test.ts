import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helper.ts';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ corsOrigins: ['https://app.beekeepers.example'] });
});
afterAll(() => t.close());

describe('CORS for web apps on other origins', () => {
  it('lets a configured origin send the token header with credentials', async () => {
    const response = await t.app.inject({
      method: 'OPTIONS',
      url: '/graphql',
      headers: { origin: 'https://app.beekeepers.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,token' },
    });
    expect(response.statusCode).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBe('https://app.beekeepers.example');
    expect(response.headers['access-control-allow-credentials']).toBe('true');
    expect(String(response.headers['access-control-allow-headers']).toLowerCase()).toContain('token');
  });

  it("lets a configured origin send the uploads' CSRF proof header", async () => {
    const response = await t.app.inject({
      method: 'OPTIONS',
      url: '/graphql',
      headers: { origin: 'https://app.beekeepers.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-requested-with' },
    });
    expect(response.statusCode).toBe(204);
    expect(String(response.headers['access-control-allow-headers']).toLowerCase()).toContain('x-requested-with');
  });

  it('grants nothing to other origins, neither the token header nor the CSRF proof header', async () => {
    for (const requested of ['token', 'x-requested-with']) {
      const response = await t.app.inject({
        method: 'OPTIONS',
        url: '/graphql',
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': requested },
      });
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
    }
    const simple = await t.app.inject({ method: 'GET', url: '/health', headers: { origin: 'https://evil.example' } });
    expect(simple.headers['access-control-allow-origin']).toBeUndefined();
  });
});
