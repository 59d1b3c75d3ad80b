/**
 * Findings of an accessibility review, in Chromium against the real cloud: numbers and times in English whatever the
 * browser's locale, a server that stops answering, large text on a phone, errors tied to the field at fault, and
 * what a screen reader is told (or spared) on the hive and box pages.
 */
import { randomBytes } from 'node:crypto';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, openPage, postJson, recordProblems, signIn, signUp, startWebTest, type WebTestEnvironment } from './browser.ts';

const PASSWORD = 'correct horse battery';

let env: WebTestEnvironment;
const suffix = randomBytes(3).toString('hex');
const user = { login: `reader_${suffix}`, hive: `meadow-${suffix}`, box: `lane-${suffix}` };

/** Whether a field is marked invalid, and the texts it names as its description. */
function fieldState(field: Locator) {
  return field.evaluate((element) => ({
    invalid: element.getAttribute('aria-invalid'),
    described: (element.getAttribute('aria-describedby') ?? '')
      .split(' ')
      .filter(Boolean)
      .map((id) => document.getElementById(id)?.textContent ?? `(no #${id})`),
  }));
}

/** How far the page can be scrolled sideways (0 when everything fits the screen's width). */
function sidewaysOverflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

beforeAll(async () => {
  env = await startWebTest();
  const { context, page } = await openPage(env);
  try {
    await signUp(page, user.login, PASSWORD);
    const token = await page.evaluate(async () => {
      const response = await fetch('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'mutation { createApiToken(name: "scale", scopes: ["ingest", "device"]) { token } }' }),
      });
      return ((await response.json()) as { data: { createApiToken: { token: string } } }).data.createApiToken.token;
    });
    const now = Math.floor(Date.now() / 1000);
    const startOfDay = Math.floor(now / 86_400) * 86_400;
    const movement = [{ hiveId: user.hive, boxId: user.box, timestamp: Math.max(startOfDay, now - 60), beesIn: 9839, beesOut: 13_153, avgSpeed: 4, p95Speed: 8 }];
    expect(await postJson(`${env.url}/entrance/v1/movement`, token, movement)).toEqual({ status: 200, body: { message: 'OK' } });
    const metrics = Array.from({ length: 6 }, (_, k) => ({ hiveId: user.hive, timestamp: now - k * 3600 - 60, fields: { temperatureCelsius: k === 0 ? 34.8 : 33.5, humidityPercent: 58, weightKg: 1042.75 } }));
    expect(await postJson(`${env.url}/iot/v1/metrics`, token, metrics)).toEqual({ status: 200, body: { message: 'OK' } });
  } finally {
    await context.close();
  }
}, 120_000);

afterAll(async () => {
  await env?.close();
});

describe('accessibility', () => {
  // A German browser showed "In 9.839 · Out 13.153", "34,8 °C" and "vor 1 Minute" on an English page.
  it('writes numbers and times in English in a German browser, in its time zone', async () => {
    const context = await env.browser.newContext({ viewport: DESKTOP, baseURL: env.url, locale: 'de-DE', timezoneId: 'Europe/Berlin' });
    const page = await context.newPage();
    const problems = recordProblems(page);
    try {
      await signIn(page, user.login, PASSWORD);
      const card = page.getByRole('article', { name: `Hive ${user.hive}` });
      await expect.poll(() => card.innerText()).toMatch(/In\s+9,839\s+Out\s+13,153/);
      const text = await card.innerText();
      expect(text).toMatch(/34\.8\s*°C/);
      expect(text).toMatch(/1,042\.75\s*kg/);
      expect(text).toMatch(/Last reading (just now|\d+ minutes? ago)/);
      const opened = Date.now();
      await page.goto(`/hives/${user.hive}`);
      // The range ends now, in the viewer's zone, which is named: as Berlin writes it, in English.
      const berlin = (t: number) => new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' }).format(t);
      const ends = [0, 1, 2].map((k) => berlin((Math.ceil(opened / 60_000) + k) * 60_000));
      const shown = await page.getByText('(Europe/Berlin time)').locator('..').innerText();
      expect(ends.some((end) => shown.includes(`– ${end}`)), shown).toBe(true);
      const temperature = page.getByRole('figure', { name: /Temperature/ });
      await temperature.getByRole('button', { name: /^Show data table/ }).click();
      const times = await temperature.locator('tbody th').allTextContents();
      expect(times.length).toBeGreaterThan(0);
      for (const time of times) expect(time).toMatch(/^\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d$/);
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });
  // A server that stopped answering left sign-in "Signing in…" with its button disabled, and a hive page "Loading…",
  // for as long as the connection hung (75 s and more).
  it('gives up on a server that does not answer, says so with "Try again", and recovers when it answers again', async () => {
    const { context, page, problems } = await openPage(env);
    const silent = () => page.route('**/graphql', () => undefined);
    try {
      await page.clock.install();
      await page.goto('/sign-in');
      await page.getByLabel('Login').fill(user.login);
      await page.getByLabel('Password').fill(PASSWORD);
      await silent();
      await page.getByRole('button', { name: 'Sign in' }).click();
      const button = page.locator('button[type=submit]');
      await expect.poll(() => button.textContent()).toBe('Signing in…');
      await page.clock.runFor(20_000);
      await expect.poll(() => page.getByRole('alert').textContent()).toBe('The server did not answer in time. Check your connection and try again.');
      expect(await button.textContent()).toBe('Sign in');
      expect(await button.getAttribute('aria-disabled')).toBe('false');
      await page.unroute('**/graphql');
      await button.click();
      const hiveLink = page.getByRole('link', { name: `Hive ${user.hive}` });
      await hiveLink.waitFor();

      await silent();
      await hiveLink.click();
      await page.getByText('Loading…').first().waitFor();
      await page.clock.runFor(20_000);
      const failed = page.getByRole('alert').filter({ hasText: 'The server did not answer in time.' });
      await failed.waitFor();
      expect(await page.getByText('Could not load this hive.').count()).toBe(1);
      await page.unroute('**/graphql');
      await page.getByRole('button', { name: 'Try again' }).first().click();
      await page.getByRole('figure', { name: /Temperature/ }).locator('svg path.line').waitFor();
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });

  // The body's text was 16px: the browser's text size enlarged only the headings, and at 200 % text the apiary of a
  // 360 px phone was 608 px wide, as the hive card's three readings stood side by side whatever their size.
  it("enlarges all text with the browser's text size, and at 200 % scrolls no page of a 360 px phone sideways", async () => {
    const { context, page, problems } = await openPage(env, { width: 360, height: 740 });
    try {
      // What the browser's text-size setting does: a larger root font size.
      await page.addInitScript(() => document.addEventListener('DOMContentLoaded', () => (document.documentElement.style.fontSize = '200%')));
      await signIn(page, user.login, PASSWORD);
      expect(await page.evaluate(() => getComputedStyle(document.body).fontSize)).toBe('32px');
      for (const [path, ready] of [
        ['/', () => page.getByRole('article', { name: `Hive ${user.hive}` }).getByText('°C')],
        [`/hives/${user.hive}`, () => page.getByRole('figure', { name: /Temperature/ }).locator('svg path.line')],
        [`/boxes/${user.box}`, () => page.getByRole('region', { name: 'Entrance traffic today' })],
        ['/profile', () => page.getByRole('button', { name: 'Create token' })],
      ] as const) {
        await page.goto(path);
        await ready().waitFor();
        await page.waitForLoadState('networkidle');
        const wide = await page.locator('body *').evaluateAll((elements) =>
          elements
            .filter((element) => element.getBoundingClientRect().right > document.documentElement.clientWidth + 1 && !element.closest('.visually-hidden, .table-wrap'))
            .map((element) => `${element.tagName.toLowerCase()}.${element.className}`)
            .slice(0, 5),
        );
        expect({ path, overflow: await sidewaysOverflow(page), wide }).toEqual({ path, overflow: 0, wide: [] });
      }
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });
  // Every error marked Login and Password invalid alike (a refused password, an empty login, a server out of reach),
  // and neither named the message; the upload form's file field and the range's "To" were never marked.
  it("marks only the field at fault invalid and ties the message to it, and no field for the server's answers", async () => {
    const context = await env.browser.newContext({ viewport: DESKTOP, baseURL: env.url, locale: 'en-GB', timezoneId: 'UTC' });
    const page = await context.newPage();
    const problems = recordProblems(page, [/net::ERR_INTERNET_DISCONNECTED/]);
    const login = page.getByLabel('Login');
    const password = page.getByLabel('Password');
    const submit = page.locator('button[type=submit]');
    try {
      await page.goto('/sign-in');
      await submit.click();
      await expect.poll(() => fieldState(login)).toEqual({ invalid: 'true', described: ['Enter your login.'] });
      expect(await fieldState(password)).toEqual({ invalid: null, described: [] });
      await login.fill(user.login);
      await submit.click();
      await expect.poll(() => fieldState(password)).toEqual({ invalid: 'true', described: ['Enter your password.'] });
      expect(await fieldState(login)).toEqual({ invalid: null, described: [] });
      // Out of reach: neither field is wrong.
      await password.fill(PASSWORD);
      await page.route('**/graphql', (route) => route.abort('internetdisconnected'));
      await submit.click();
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('Cannot reach the server');
      expect([await fieldState(login), await fieldState(password)]).toEqual([{ invalid: null, described: [] }, { invalid: null, described: [] }]);
      await page.unroute('**/graphql');

      await page.goto('/sign-up');
      await login.fill('no spaces please');
      await password.fill(PASSWORD);
      await submit.click();
      await expect.poll(() => fieldState(login)).toEqual({ invalid: 'true', described: ['3–100 letters, digits or . _ @ + -', 'The login needs 3–100 letters, digits or . _ @ + - and nothing else.'] });
      expect(await fieldState(password)).toEqual({ invalid: null, described: ['At least 10 characters.'] });
      expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('login');

      await signIn(page, user.login, PASSWORD);
      await page.goto(`/boxes/${user.box}`);
      await page.getByRole('button', { name: 'Upload', exact: true }).click();
      await expect.poll(() => fieldState(page.getByLabel('Video file'))).toEqual({ invalid: 'true', described: ['Choose a video file to upload.'] });
      expect((await fieldState(page.getByLabel('Recorded at (optional)'))).invalid).toBeNull();

      await page.goto(`/hives/${user.hive}`);
      await page.getByRole('radio', { name: 'Custom' }).check();
      const from = page.getByLabel('From', { exact: true });
      const to = page.getByLabel('To', { exact: true });
      await from.fill('2026-03-02T10:00');
      await to.fill('2026-03-01T10:00');
      await page.getByRole('button', { name: 'Apply' }).click();
      await expect.poll(() => fieldState(to)).toEqual({ invalid: 'true', described: ['"To" must be after "From".'] });
      expect(await fieldState(from)).toEqual({ invalid: null, described: [] });
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });
  // All five charts' buttons were named "Show data table", and each breadcrumb separator "›" was read aloud.
  it("names each chart's data-table button by its chart, and keeps the breadcrumbs' separators from screen readers", async () => {
    const { context, page, problems } = await openPage(env);
    try {
      await signIn(page, user.login, PASSWORD);
      await page.goto(`/hives/${user.hive}`);
      await page.getByRole('figure', { name: 'Bee speed' }).locator('svg').waitFor();
      const buttons = page.getByRole('button', { name: /^Show data table/ });
      const names = await buttons.evaluateAll((elements) => elements.map((button) => button.textContent?.replace(/\s+/g, ' ').trim()));
      expect(names).toHaveLength(5);
      for (const name of names) expect(name).toMatch(/^Show data table of \S/);
      expect(new Set(names).size).toBe(5);
      // The name a screen reader gets (the hidden title included), and only the chart's own.
      expect(await page.getByRole('figure', { name: /^Bee speed/ }).getByRole('button', { name: /^Show data table of Bee speed/ }).count()).toBe(1);

      const breadcrumbs = page.getByRole('navigation', { name: 'Breadcrumb' });
      expect(await breadcrumbs.getByRole('listitem').count()).toBeGreaterThan(1);
      expect(await breadcrumbs.ariaSnapshot()).not.toContain('›');
      // Still drawn for the eye.
      expect(await breadcrumbs.locator('li + li').first().evaluate((item) => getComputedStyle(item, '::before').content)).toContain('›');
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
