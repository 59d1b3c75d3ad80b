/**
 * The web app in a real browser (Debian's Chromium through playwright-core) against the real cloud on a fresh
 * database: accounts, API tokens, telemetry on the overview and the hive charts, keyboard use, isolation between
 * users, and screenshots of the main pages for a human to look at (test-results/screenshots/).
 */
import { randomBytes } from 'node:crypto';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../helper.ts';
import { DESKTOP, openPage, PHONE, postJson, recordProblems, screenshot, signIn, signUp, startWebTest, type WebTestEnvironment } from './browser.ts';

const PASSWORD = 'correct horse battery';
const HOUR = 3600;

let env: WebTestEnvironment;
const suffix = randomBytes(3).toString('hex');
const alice = { login: `alice_${suffix}`, hive: `garden-${suffix}`, box: `gate-${suffix}` };
const bob = { login: `bob_${suffix}` };

/** Readings of the last day, hourly; the newest is 35.2 °C, 61 % and 42.75 kg. */
function dayOfMetrics(now: number) {
  return Array.from({ length: 24 }, (_, k) => ({
    hiveId: alice.hive,
    timestamp: now - k * HOUR - 60,
    fields: { temperatureCelsius: k === 0 ? 35.2 : 33 + (k % 5) * 0.4, humidityPercent: k === 0 ? 61 : 55 + (k % 7), weightKg: k === 0 ? 42.75 : 42 + k * 0.01 },
  }));
}

/** Entrance counts of the last minutes (all in today's UTC date): 120 in, 95 out in total. */
function recentMovement(now: number) {
  const startOfDay = Math.floor(now / 86_400) * 86_400;
  return [
    { beesIn: 70, beesOut: 40, avgSpeed: 4.1, p95Speed: 8.2 },
    { beesIn: 50, beesOut: 55, avgSpeed: 3.8, p95Speed: 7.5 },
  ].map((counts, k) => ({ hiveId: alice.hive, boxId: alice.box, timestamp: Math.max(startOfDay, now - 120 + k * 60), ...counts }));
}

async function accessibleNamesMissing(page: Page): Promise<string[]> {
  return page.locator('input:not([type=hidden]), select, textarea, button').evaluateAll((elements) =>
    elements
      .filter((element) => {
        const labelled = element.getAttribute('aria-label') || element.getAttribute('aria-labelledby') || (element as HTMLInputElement).labels?.length;
        const text = element.tagName === 'BUTTON' && element.textContent?.trim();
        return !labelled && !text && !element.closest('[hidden]');
      })
      .map((element) => element.outerHTML.slice(0, 120)),
  );
}

async function landmarks(page: Page) {
  return {
    main: await page.locator('main').count(),
    h1: await page.locator('h1').count(),
    banner: await page.locator('header.site-header').count(),
  };
}

beforeAll(async () => {
  env = await startWebTest();
}, 120_000);

afterAll(async () => {
  await env?.close();
});

describe('web app in Chromium', () => {
  let token: string;

  it('signs up, creates an API token on the profile page (shown once) and shows posted telemetry', async () => {
    const { context, page, problems } = await openPage(env);
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    try {
      // A signed-out visitor lands on sign-in.
      await page.goto('/');
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      expect(new URL(page.url()).pathname).toBe('/sign-in');
      await screenshot(page, 'sign-in-desktop');

      // The password's length is checked before sending; the server's own messages are shown as they come.
      await page.getByRole('link', { name: 'Create an account' }).click();
      await page.getByLabel('Login').fill(alice.login);
      await page.getByLabel('Password').fill('short');
      await page.getByRole('button', { name: 'Create account' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toBe('The password needs at least 10 characters.');
      await page.getByLabel('Login').fill('x');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Create account' }).click();
      // The login's rule is checked before sending too (the server's raw "login must be …" named no field).
      await expect.poll(() => page.getByRole('alert').textContent()).toBe('The login needs 3–100 letters, digits or . _ @ + - and nothing else.');

      await page.getByLabel('Login').fill(alice.login);
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.getByRole('heading', { level: 1, name: 'Apiary' }).waitFor();
      await page.getByRole('heading', { name: 'No hives yet' }).waitFor();
      const cookies = await context.cookies();
      const session = cookies.find((c) => c.name === 'service_session');
      expect(session?.httpOnly).toBe(true);
      expect(await page.evaluate(() => document.cookie)).not.toContain('service_session');

      // Profile: make a token for a scale.
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Profile' }).click();
      await page.getByRole('heading', { level: 1, name: 'Profile' }).waitFor();
      await page.getByLabel('Name').fill('scale in the garden');
      await page.getByRole('button', { name: 'Create token' }).click();
      const tokenField = page.getByRole('textbox', { name: 'New API token' });
      await tokenField.waitFor();
      token = await tokenField.inputValue();
      expect(token.split('.')).toHaveLength(3);
      await page.getByRole('button', { name: 'Copy', exact: true }).click();
      await expect.poll(() => page.getByText('Copied to the clipboard.').count()).toBe(1);
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token);
      const row = page.getByRole('row', { name: /scale in the garden/ });
      await expect.poll(() => row.textContent()).toContain('ingest, device');
      await screenshot(page, 'profile-token-created-desktop');
      await page.getByRole('button', { name: 'Done, I have stored it' }).click();
      expect(await page.content()).not.toContain(token);
      await page.reload();
      await page.getByRole('row', { name: /scale in the garden/ }).waitFor();
      expect(await page.content()).not.toContain(token);

      // The device posts with the token over REST.
      const now = Math.floor(Date.now() / 1000);
      expect(await postJson(`${env.url}/iot/v1/metrics`, token, dayOfMetrics(now))).toEqual({ status: 200, body: { message: 'OK' } });
      expect(await postJson(`${env.url}/entrance/v1/movement`, token, recentMovement(now))).toEqual({ status: 200, body: { message: 'OK' } });
      await page.getByRole('row', { name: /scale in the garden/ }).getByText(/ago|just now/).waitFor({ timeout: 5000 }).catch(() => undefined);

      // Overview: the hive's last reading and the box's counts of today.
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Apiary' }).click();
      const card = page.getByRole('article', { name: `Hive ${alice.hive}` });
      await card.waitFor();
      expect(await card.locator('.readings').innerText()).toMatch(/Temperature\s+35\.2 °C[\s\S]*Humidity\s+61 %[\s\S]*Weight\s+42\.75 kg/);
      const traffic = card.getByRole('definition');
      expect(await card.locator('.traffic-today').innerText()).toMatch(/In\s+120\s+Out\s+95\s+Net\s+\+25/);
      expect(await traffic.count()).toBeGreaterThan(3);
      await screenshot(page, 'overview-desktop');

      // Hive page: charts with tables of the same numbers.
      await card.getByRole('link', { name: `Hive ${alice.hive}` }).click();
      await page.getByRole('heading', { level: 1, name: `Hive ${alice.hive}` }).waitFor();
      // The chart times are the browser's local time, and the page did not say which zone that is.
      expect(await page.locator('.page-head').innerText()).toMatch(/\(UTC time\)$/);
      const temperature = page.getByRole('figure', { name: /Temperature/ });
      await temperature.locator('svg path.line').waitFor();
      expect(await temperature.locator('svg path.line').getAttribute('d')).toMatch(/^M[\d.]+,[\d.]+(L[\d.]+,[\d.]+){20,}/);
      expect(await temperature.locator('svg desc').textContent()).toContain('latest 35.2 °C');
      await temperature.getByRole('button', { name: 'Show data table' }).click();
      const temperatureTable = temperature.getByRole('table');
      expect(await temperatureTable.locator('tbody tr').count()).toBe(24);
      expect(await temperatureTable.innerText()).toContain('35.2');
      expect(await temperature.getByRole('button', { name: 'Hide data table' }).getAttribute('aria-expanded')).toBe('true');
      // Pointing at the chart's right-hand end reads out the latest reading; leaving the chart hides the read-out.
      const pointAtEnd = async (svg: Locator) => {
        const box = (await svg.boundingBox())!;
        await svg.hover({ position: { x: box.width - 16, y: box.height / 2 } });
      };
      await pointAtEnd(temperature.locator('svg'));
      await expect.poll(() => temperature.locator('svg .hover').textContent()).toContain('35.2 °C');
      await temperature.getByRole('button', { name: 'Hide data table' }).hover();
      await expect.poll(() => temperature.locator('svg .hover').count()).toBe(0);

      const trafficChart = page.getByRole('figure', { name: /Traffic per 15 minutes/ });
      expect(await trafficChart.locator('svg desc').textContent()).toMatch(/Bees in 120, out 95, net \+25/);
      expect(await trafficChart.locator('rect.bar').count()).toBeGreaterThanOrEqual(2);
      // The traffic read-out names the interval under the pointer and its three counts, as its table row does.
      await pointAtEnd(trafficChart.locator('svg'));
      await expect.poll(() => trafficChart.locator('svg .hover').textContent()).toMatch(/In: \d+Out: \d+Net: [+−-]?\d+$/);
      const speed = page.getByRole('figure', { name: /Bee speed/ });
      expect(await speed.locator('svg desc').textContent()).toMatch(/Average of all bees: latest [\d.]+ px\/frame/);
      // Its axis started near the slowest speed, so 3.8 against 4.1 px/frame looked like a halving.
      expect(await speed.locator('svg .axes text.tick-label').first().textContent()).toBe('0');
      await screenshot(page, 'hive-desktop');

      // Another range: 7 days, kept in the URL.
      await page.getByRole('radio', { name: '7 d' }).check();
      await expect.poll(() => new URL(page.url()).search).toBe('?range=7d');
      await page.getByRole('figure', { name: /Traffic per 2 hours/ }).waitFor();

      // Custom range with a mistake, then a valid one.
      await page.getByRole('radio', { name: 'Custom' }).check();
      const from = page.getByLabel('From', { exact: true });
      const to = page.getByLabel('To', { exact: true });
      await from.fill('2026-05-10T10:00');
      await to.fill('2026-05-09T10:00');
      await page.getByRole('button', { name: 'Apply' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('"To" must be after "From"');
      // The browser runs in UTC here, so local input times are UTC instants.
      const local = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 16);
      await from.fill(local(now - 2 * HOUR));
      await to.fill(local(now + 120));
      await page.getByRole('button', { name: 'Apply' }).click();
      await expect.poll(() => new URL(page.url()).searchParams.get('from')).toBe(`${local(now - 2 * HOUR)}:00.000Z`);
      await page.getByRole('figure', { name: /Traffic per 5 minutes/ }).waitFor();
      // The temperature table opened above stays open and now holds the two readings of these two hours.
      await expect.poll(() => page.getByRole('figure', { name: /Temperature/ }).locator('tbody tr').count()).toBe(2);

      // Phone-sized screens.
      await page.setViewportSize(PHONE);
      await page.goto(`/hives/${alice.hive}`);
      await page.getByRole('figure', { name: /Temperature/ }).locator('svg path.line').waitFor();
      await page.getByRole('figure', { name: /Traffic per/ }).locator('rect.bar').first().waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      await screenshot(page, 'hive-phone');
      await page.goto('/');
      await page.getByRole('article', { name: `Hive ${alice.hive}` }).waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
      await screenshot(page, 'overview-phone');
      await page.goto('/profile');
      await page.getByRole('row', { name: /scale in the garden/ }).waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
      await screenshot(page, 'profile-phone');
      await page.setViewportSize(DESKTOP);

      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('shows the entrance page of a box, and pages are labelled and structured', async () => {
    const { context, page, problems } = await openPage(env);
    try {
      await signIn(page, alice.login, PASSWORD);
      await page.getByRole('link', { name: `Box ${alice.box}` }).click();
      await page.getByRole('heading', { level: 1, name: `Entrance · box ${alice.box}` }).waitFor();
      expect(await page.getByRole('region', { name: 'Entrance traffic today' }).innerText()).toMatch(/In today\s+120[\s\S]*Out today\s+95/);
      await page.getByRole('heading', { name: 'Live view' }).waitFor();
      await page.getByRole('heading', { name: 'Daily heatmaps' }).waitFor();
      await page.getByRole('heading', { name: 'Recorded clips' }).waitFor();
      await page.waitForLoadState('networkidle');
      await screenshot(page, 'entrance-desktop');

      for (const path of ['/', `/hives/${alice.hive}`, `/boxes/${alice.box}`, '/profile']) {
        await page.goto(path);
        await page.locator('h1').waitFor();
        await page.waitForLoadState('networkidle');
        expect(await landmarks(page), path).toEqual({ main: 1, h1: 1, banner: 1 });
        expect(await page.getByRole('navigation', { name: 'Main' }).count(), path).toBe(1);
        expect(await accessibleNamesMissing(page), path).toEqual([]);
        expect(await page.title(), path).toMatch(/ · HiveGate$/);
      }
      await page.setViewportSize(PHONE);
      await page.goto(`/boxes/${alice.box}`);
      await page.getByRole('heading', { name: 'Recorded clips' }).waitFor();
      await page.waitForLoadState('networkidle');
      expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
      await screenshot(page, 'entrance-phone');
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('signs in with the keyboard only, moves focus to each new page, and Back returns to where the page was left', async () => {
    const { context, page, problems } = await openPage(env);
    try {
      await page.goto('/sign-in');
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      // From the top of the page: Tab until the login field has focus (skip link and brand come first).
      for (let i = 0; i < 6 && (await page.evaluate(() => document.activeElement?.getAttribute('name'))) !== 'login'; i++) await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('login');
      expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).not.toBe('none');
      await page.keyboard.type(alice.login);
      await page.keyboard.press('Tab');
      await page.keyboard.type('wrong password!');
      await page.keyboard.press('Enter');
      await expect.poll(() => page.getByRole('alert').textContent()).toBe('Login or password is wrong.');
      await page.keyboard.press('Shift+Tab');
      expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('login');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Control+A');
      await page.keyboard.type(PASSWORD);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: 'Apiary' }).waitFor();
      await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Apiary');

      // Back up from the heading into the navigation, to Profile, and follow it with Enter.
      for (let i = 0; i < 6 && (await page.evaluate(() => document.activeElement?.textContent)) !== 'Profile'; i++) await page.keyboard.press('Shift+Tab');
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Profile');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: 'Profile' }).waitFor();
      await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Profile');
      expect(new URL(page.url()).pathname).toBe('/profile');

      // On a fresh load the skip link is the first stop and moves focus into the main content.
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Profile' }).waitFor();
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
      expect(await page.evaluate(() => getComputedStyle(document.activeElement!).top)).toBe('8px');
      await page.keyboard.press('Enter');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');

      // Back jumped to the top of the page and took the focus to its heading: the place in a long page was lost.
      await page.setViewportSize(PHONE);
      await page.goto(`/hives/${alice.hive}?range=7d`);
      await page.getByRole('figure', { name: /Traffic per/ }).locator('rect.bar').first().waitFor();
      const boxLink = page.getByRole('link', { name: 'Live view, heatmaps and clips' });
      await boxLink.scrollIntoViewIfNeeded();
      const scrolled = () => page.evaluate(() => Math.round(window.scrollY));
      const left = await scrolled();
      expect(left).toBeGreaterThan(500);
      await boxLink.focus();
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: `Entrance · box ${alice.box}` }).waitFor();
      await expect.poll(() => page.evaluate(() => document.activeElement?.tagName)).toBe('H1');
      expect(await scrolled()).toBe(0);
      // The hive breadcrumb of the box page went back to the last 24 h from the 7 days chosen.
      const hiveCrumb = page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: `Hive ${alice.hive}` });
      expect(await hiveCrumb.getAttribute('href')).toBe(`/hives/${alice.hive}?range=7d`);
      expect(await page.getByRole('link', { name: 'Traffic and climate charts' }).getAttribute('href')).toBe(`/hives/${alice.hive}?range=7d`);
      await page.goBack();
      await page.getByRole('heading', { level: 1, name: `Hive ${alice.hive}` }).waitFor();
      await expect.poll(scrolled).toBe(left);
      expect(await page.evaluate(() => document.activeElement?.tagName)).not.toBe('H1');
      await page.goForward();
      await page.getByRole('heading', { level: 1, name: `Entrance · box ${alice.box}` }).waitFor();
      await expect.poll(scrolled).toBe(0);
      await page.setViewportSize(DESKTOP);
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });

  // After a pressed button gave way (disabled while busy, or replaced by the next step's), focus fell to the page.
  it('keeps the keyboard focus where the work goes on: empty fields, a refused sign-in, a new token, a revoke taken back and made', async () => {
    const { context, page, problems } = await openPage(env);
    const focused = () => page.evaluate(() => ({ name: document.activeElement?.getAttribute('name') ?? null, text: document.activeElement?.textContent?.trim() ?? '' }));
    try {
      await page.goto('/sign-in');
      const submit = page.getByRole('button', { name: 'Sign in', exact: true });
      await submit.focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => page.getByRole('alert').textContent()).toBe('Enter your login.');
      expect((await focused()).name).toBe('login');
      await page.keyboard.type(alice.login);
      await page.keyboard.press('Enter');
      await expect.poll(() => page.getByRole('alert').textContent()).toBe('Enter your password.');
      expect((await focused()).name).toBe('password');
      await page.keyboard.type('wrong password!');
      await submit.focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => page.getByRole('alert').textContent()).toBe('Login or password is wrong.');
      expect(await focused()).toEqual({ name: null, text: 'Sign in' });
      await page.getByLabel('Password').fill(PASSWORD);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: 'Apiary' }).waitFor();

      await page.goto('/profile');
      // A form sent without a name left the focus on its button, and the message was tied to no field.
      const nameField = page.getByLabel('Name');
      const createButton = page.getByRole('button', { name: 'Create token' });
      const fieldState = (field: Locator) =>
        field.evaluate((element) => ({
          focused: element === document.activeElement,
          invalid: element.getAttribute('aria-invalid'),
          described: (element.getAttribute('aria-describedby') ?? '').split(' ').map((id) => document.getElementById(id)?.textContent ?? ''),
        }));
      await createButton.focus();
      await page.keyboard.press('Enter');
      const noName = 'Give the token a name, such as the device that will use it.';
      await expect.poll(() => page.getByRole('alert').textContent()).toBe(noName);
      expect(await fieldState(nameField)).toEqual({ focused: true, invalid: 'true', described: ['For example “scale hive 3” or “entrance camera”.', noName] });
      // One long word: it stretched the table far past its card, and Revoke out of sight.
      const name = `focus-check-${'x'.repeat(80)}`;
      await page.keyboard.type(name);
      for (const scope of ['ingest', 'device']) await page.getByRole('checkbox', { name: new RegExp(`^${scope}`) }).uncheck();
      await createButton.focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => page.getByRole('alert').textContent()).toBe('Choose at least one permission.');
      expect((await fieldState(page.getByRole('checkbox', { name: /^ingest/ }))).focused).toBe(true);
      expect((await fieldState(page.getByRole('group', { name: 'Permissions' }))).described).toEqual(['Choose at least one permission.']);
      expect((await fieldState(nameField)).invalid).toBeNull();
      await page.keyboard.press('Space');
      await createButton.focus();
      await page.keyboard.press('Enter');
      await page.getByRole('textbox', { name: 'New API token' }).waitFor();
      await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.className)).toBe('token-value');
      const row = page.getByRole('row', { name: /focus-check/ });
      await expect.poll(() => row.count()).toBe(1);
      // "Done" closed the reveal and the focus fell to the page; it goes to the new token's row, which names it.
      await page.getByRole('button', { name: 'Done, I have stored it' }).focus();
      await page.keyboard.press('Enter');
      await expect.poll(async () => (await focused()).text).toBe(name);
      const table = page.locator('.tokens-table');
      expect(await table.evaluate((element) => element.scrollWidth <= element.parentElement!.clientWidth)).toBe(true);
      await row.getByRole('button', { name: `Revoke ${name}` }).focus();
      await page.keyboard.press('Enter');
      await expect.poll(async () => (await focused()).text).toBe('Keep');
      // Escape takes the question back (it did nothing), and the focus returns to "Revoke".
      await page.keyboard.press('Escape');
      await expect.poll(async () => (await focused()).text).toBe(`Revoke ${name}`);
      expect(await row.getByRole('button', { name: 'Keep' }).count()).toBe(0);
      await page.keyboard.press('Enter');
      await expect.poll(async () => (await focused()).text).toBe('Keep');
      await page.keyboard.press('Shift+Tab');
      expect((await focused()).text).toBe(`Revoke now ${name}`);
      await page.keyboard.press('Enter');
      await expect.poll(() => row.textContent()).toContain('Revoked');
      await expect.poll(async () => (await focused()).text).toBe(name);
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("never shows one user another user's hives, boxes or tokens", async () => {
    const { context, page, problems } = await openPage(env);
    try {
      await signUp(page, bob.login, PASSWORD);
      await page.getByRole('heading', { name: 'No hives yet' }).waitFor();
      expect(await page.content()).not.toContain(alice.hive);

      await page.goto(`/hives/${alice.hive}`);
      await page.getByText('There is no such hive in your apiary.').waitFor();
      await page.waitForLoadState('networkidle');
      const hivePage = await page.locator('main').innerText();
      expect(hivePage).not.toContain('35.2');
      expect(await page.locator('svg path.line').count()).toBe(0);

      // Before, another user's box (or a mistyped one) got the whole page, with a live view that blamed the camera.
      await page.goto(`/boxes/${alice.box}`);
      await page.getByText('There is no such box in your apiary.').waitFor();
      await page.waitForLoadState('networkidle');
      const boxPage = await page.locator('main').innerText();
      expect(boxPage).not.toMatch(/\b120\b|\b95\b/);
      expect(await page.getByRole('button', { name: 'Start live view' }).count()).toBe(0);

      await page.goto('/profile');
      await page.getByText('No tokens yet.').waitFor();
      expect(await page.content()).not.toContain('scale in the garden');

      // Bob's session cannot read Alice's series through GraphQL either (the pages use nothing else).
      const answer = await page.evaluate(
        async ([hive, box]) => {
          const response = await fetch('/graphql', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              query: 'query ($hive: ID!, $box: ID!) { hive(id: $hive) { id } hiveMetrics(hiveId: $hive, from: "2000-01-01", to: "2100-01-01") { time } entranceMovement(boxId: $box, from: "2000-01-01", to: "2100-01-01") { time } }',
              variables: { hive, box },
            }),
          });
          return response.json();
        },
        [alice.hive, alice.box],
      );
      expect(answer).toEqual({ data: { hive: null, hiveMetrics: [], entranceMovement: [] } });
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('revokes a token on the profile page only after asking again', async () => {
    const { context, page, problems } = await openPage(env);
    try {
      await signIn(page, bob.login, PASSWORD);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Profile' }).click();
      await page.getByLabel('Name').fill('old weather station');
      await page.getByRole('button', { name: 'Create token' }).click();
      const created = await page.getByRole('textbox', { name: 'New API token' }).inputValue();
      await page.getByRole('button', { name: 'Done, I have stored it' }).click();
      const row = page.getByRole('row', { name: /old weather station/ });
      await row.getByRole('button', { name: 'Revoke old weather station', exact: true }).click();
      await row.getByRole('button', { name: 'Keep' }).click();
      expect(await row.innerText()).toContain('Active');
      await row.getByRole('button', { name: 'Revoke old weather station', exact: true }).click();
      await row.getByRole('button', { name: 'Revoke now old weather station' }).click();
      await expect.poll(() => row.innerText()).toMatch(/Revoked /);
      expect(await row.getByRole('button').count()).toBe(0);
      expect((await postJson(`${env.url}/iot/v1/metrics`, created, dayOfMetrics(Math.floor(Date.now() / 1000)))).status).toBe(401);
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });

  // Three empty "No readings" charts led the page of a hive with only an entrance camera, or with no scale.
  it('charts only the readings a hive sends, and leads with the entrances of a hive without sensors', async () => {
    const { context, page, problems } = await openPage(env);
    try {
      const now = Math.floor(Date.now() / 1000);
      const cameraOnly = { hive: `shed-${suffix}`, box: `door-${suffix}` };
      const noScale = `meadow-${suffix}`;
      const named = `Hive 3/Nord-${suffix}`;
      const movement = recentMovement(now).map((m) => ({ ...m, hiveId: cameraOnly.hive, boxId: cameraOnly.box }));
      expect((await postJson(`${env.url}/entrance/v1/movement`, token, movement)).status).toBe(200);
      const climate = [1, 2].map((k) => ({ hiveId: noScale, timestamp: now - k * HOUR, fields: { temperatureCelsius: 34 + k, humidityPercent: 60 } }));
      expect((await postJson(`${env.url}/iot/v1/metrics`, token, climate)).status).toBe(200);
      expect((await postJson(`${env.url}/iot/v1/metrics`, token, [{ hiveId: named, timestamp: now - HOUR, fields: { weightKg: 40 } }])).status).toBe(200);
      await signIn(page, alice.login, PASSWORD);
      // A hive whose id begins with "Hive" was "Hive Hive 3/Nord"; a reading it does not send read "— °C".
      const namedCard = page.getByRole('article', { name: named, exact: true });
      expect(await namedCard.getByRole('heading').innerText()).toBe(named);
      expect(await namedCard.locator('.readings').innerText()).toMatch(/^Temperature\s+—\s+Humidity\s+—\s+Weight\s+40 kg$/);

      await page.goto(`/hives/${cameraOnly.hive}`);
      await page.getByRole('figure', { name: /Traffic per/ }).waitFor();
      const climateSection = page.getByRole('region', { name: 'Climate and weight' });
      await expect.poll(() => climateSection.innerText()).toContain('This hive has sent no temperature, humidity or weight readings.');
      expect(await page.getByRole('figure', { name: /Temperature|Humidity|Weight/ }).count()).toBe(0);
      const headings = await page.locator('main h2').allInnerTexts();
      expect(headings).toEqual([`Entrance · box ${cameraOnly.box}`, 'Climate and weight']);

      await page.goto(`/hives/${noScale}`);
      await page.getByRole('figure', { name: /Temperature/ }).locator('svg path.line').waitFor();
      // A chart is named by its title: the whole caption made it "Temperature (°C) Legend Temperature".
      expect(await page.getByRole('figure', { name: 'Temperature (°C)', exact: true }).count()).toBe(1);
      expect(await page.getByRole('figure', { name: /Humidity/ }).count()).toBe(1);
      expect(await page.getByRole('figure', { name: /Weight/ }).count()).toBe(0);
      expect(await page.getByRole('region', { name: 'Climate and weight' }).innerText()).toContain('No weight readings in this range.');
      expect(await page.locator('main h2').first().innerText()).toBe('Climate and weight');

      // A range before the hive's first reading says when the last one came.
      await page.goto(`/hives/${noScale}?from=2026-01-01T00:00:00.000Z&to=2026-01-02T00:00:00.000Z`);
      await expect.poll(() => page.getByRole('region', { name: 'Climate and weight' }).innerText()).toMatch(/No temperature, humidity or weight readings in this range; the last came (1 hour ago|\d+ minutes ago)\./);
      await screenshot(page, 'hive-without-readings-desktop');
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });

  // With the server gone, another range drew the previous range's readings on the new axis, under the error.
  it("shows no range's data under another when the server cannot be reached, and keeps a moving window's through a failed re-read", async () => {
    const context = await env.browser.newContext({ viewport: DESKTOP, baseURL: env.url, locale: 'en-GB', timezoneId: 'UTC' });
    const page = await context.newPage();
    // The browser logs each request cut off below.
    const problems = recordProblems(page, [/net::ERR_INTERNET_DISCONNECTED/, /status of 502/]);
    const offline = () => page.route('**/graphql', (route) => route.abort('internetdisconnected'));
    try {
      await page.clock.install();
      await signIn(page, alice.login, PASSWORD);
      await page.goto(`/hives/${alice.hive}`);
      const climate = page.getByRole('region', { name: 'Climate and weight' });
      const traffic = page.getByRole('region', { name: `Entrance · box ${alice.box}` });
      await climate.getByRole('figure', { name: /Temperature/ }).locator('svg path.line').waitFor();
      await traffic.getByRole('figure', { name: 'Traffic per 15 minutes' }).locator('rect.bar').first().waitFor();

      // "The last 24 h" a minute later is the same window: its charts stay, with the error above them.
      await offline();
      await page.clock.runFor(61_000);
      await expect.poll(() => climate.locator('.notice-error').textContent()).toContain('Cannot reach the server');
      expect(await climate.getByRole('figure', { name: /Temperature/ }).count()).toBe(1);
      expect(await traffic.getByRole('figure', { name: 'Traffic per 15 minutes' }).count()).toBe(1);

      // Another range: the error alone, no charts of the last range and no claim that there are no readings.
      await page.getByRole('radio', { name: '7 d' }).check();
      await expect.poll(() => new URL(page.url()).search).toBe('?range=7d');
      await expect.poll(() => traffic.locator('.notice-error').textContent()).toContain('Cannot reach the server');
      await expect.poll(() => climate.locator('.notice-error').textContent()).toContain('Cannot reach the server');
      // Read out once, not by each part of the page that failed alike.
      expect(await page.getByRole('alert').count()).toBe(1);
      expect(await page.getByRole('figure').count()).toBe(0);
      expect(await climate.innerText()).not.toMatch(/No .*readings/);

      // Back online, the new range's charts come.
      await page.unroute('**/graphql');
      await page.getByRole('radio', { name: '30 d' }).check();
      await climate.getByRole('figure', { name: /Temperature/ }).locator('svg path.line').waitFor();
      await traffic.getByRole('figure', { name: 'Traffic per 6 hours' }).waitFor();
      expect(await page.getByRole('alert').count()).toBe(0);

      // A proxy's error page said "The server answered 502 Bad Gateway without a readable body."
      await page.route('**/graphql', (route) => route.fulfill({ status: 502, contentType: 'text/html', body: '<html><body>Bad Gateway</body></html>' }));
      await page.getByRole('radio', { name: '7 d' }).check();
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('The server could not be reached (502 Bad Gateway). Try again in a moment.');
      await page.unroute('**/graphql');
      await page.getByRole('radio', { name: '30 d' }).check();
      await traffic.getByRole('figure', { name: 'Traffic per 6 hours' }).waitFor();

      // The same on the box page: a day's heatmap that could not be read is not reported missing.
      await page.goto(`/boxes/${alice.box}`);
      const heatmaps = page.getByRole('region', { name: 'Daily heatmaps' });
      await heatmaps.getByText(/^No heatmaps yet/).waitFor();
      await offline();
      await heatmaps.getByLabel('Day (UTC)', { exact: true }).fill('2026-05-01');
      await expect.poll(() => heatmaps.getByRole('alert').textContent()).toContain('Cannot reach the server');
      expect(await heatmaps.innerText()).not.toMatch(/No heatmap/);
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });

  // A page opened during a short outage kept its error for good: a failed first load was never read again, the hive
  // page and the heatmaps had no "Try again", and the live view said that no stream was running.
  it('recovers by itself, or on "Try again", a page whose first load failed during an outage', async () => {
    const context = await env.browser.newContext({ viewport: DESKTOP, baseURL: env.url, locale: 'en-GB', timezoneId: 'UTC' });
    const page = await context.newPage();
    const problems = recordProblems(page, [/net::ERR_INTERNET_DISCONNECTED/]);
    const offline = () => page.route('**/graphql', (route) => route.abort('internetdisconnected'));
    try {
      await page.clock.install();
      await signIn(page, alice.login, PASSWORD);
      const hiveLink = page.getByRole('link', { name: `Hive ${alice.hive}` });
      await hiveLink.waitFor();
      await offline();
      await hiveLink.click();
      const failed = page.getByText('Could not load this hive.');
      await failed.waitFor();
      expect(await page.getByRole('button', { name: 'Try again' }).count()).toBe(1);
      await page.unroute('**/graphql');
      // Nobody presses anything: the page reads again after a few seconds.
      await page.clock.runFor(5_100);
      await page.getByRole('figure', { name: /Temperature/ }).locator('svg path.line').waitFor();
      expect(await failed.count()).toBe(0);

      await offline();
      await page.getByRole('link', { name: 'Live view, heatmaps and clips' }).click();
      const live = page.getByRole('region', { name: 'Live view' });
      const heatmaps = page.getByRole('region', { name: 'Daily heatmaps' });
      await live.getByText('Could not check whether a live stream is running.').waitFor();
      expect(await live.innerText()).not.toContain('No live stream is running.');
      expect(await live.getByRole('button', { name: 'Start live view' }).count()).toBe(0);
      await heatmaps.getByText('Could not load the heatmaps.').waitFor();
      await page.getByRole('region', { name: 'Recorded clips' }).getByText('Could not load the clips.').waitFor();
      // Four parts failed alike, and each was read out as an alert.
      expect(await page.getByRole('alert').count()).toBe(1);
      await page.unroute('**/graphql');
      await heatmaps.getByRole('button', { name: 'Try again' }).click();
      await heatmaps.getByText(/^No heatmaps yet/).waitFor();
      await live.getByRole('button', { name: 'Try again' }).click();
      await live.getByText('No live stream is running.').waitFor();
      // Focus stays in the card: on the button that is there now.
      await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Start live view');
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });

  // An ended session (expired, or revoked elsewhere) led to the sign-in page's "Welcome back", with no word of why.
  it('says on the sign-in page that the session ended, while the app was open and on a later visit, but not after signing out', async () => {
    const { context, page, problems } = await openPage(env);
    const ended = page.getByText('Your session has ended.');
    const endSessions = async () => {
      await env.testApp.app.ctx.db.query(
        `UPDATE api_tokens SET revoked_at = now() WHERE kind = 'session' AND revoked_at IS NULL AND user_id = (SELECT id FROM users WHERE login = $1)`,
        [bob.login],
      );
      // The server trusts a token's checked status this long here (tokenCacheSeconds).
      await new Promise((resolve) => setTimeout(resolve, (env.testApp.config.tokenCacheSeconds + 0.2) * 1000));
    };
    try {
      await signIn(page, bob.login, PASSWORD);
      await endSessions();
      // The app's next request finds the session gone.
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Profile' }).click();
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      expect(new URL(page.url()).search).toBe(`?next=${encodeURIComponent('/profile')}`);
      await ended.waitFor();
      // It was shown and not said: a screen reader heard only the new page's heading.
      expect(await page.getByRole('alert').filter({ hasText: 'Your session has ended.' }).count()).toBe(1);
      expect(await page.locator('.auth-card').innerText()).toContain('Sign in again to carry on.');
      expect(await page.getByText('Welcome back').count()).toBe(0);
      await page.getByLabel('Login').fill(bob.login);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { level: 1, name: 'Profile' }).waitFor();

      // A later visit, with the cookie of a session that has ended since.
      await endSessions();
      await page.goto('/');
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      await ended.waitFor();
      await page.getByLabel('Login').fill(bob.login);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { level: 1, name: 'Apiary' }).waitFor();

      // Signing out is no surprise, then or on the next visit.
      await page.getByRole('button', { name: /Sign out/ }).click();
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      await page.getByText('Welcome back').waitFor();
      expect(await ended.count()).toBe(0);
      await page.goto('/profile');
      await page.getByText('Welcome back').waitFor();
      expect(await ended.count()).toBe(0);
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000); // three sign-ins and two waits for the token cache: past 30 s on a busy machine

  // Sign-ups could not be turned off; turned off (SIGNUP=closed), the pages must not offer a form the server refuses.
  it('offers no sign-up when the server takes no new accounts', async () => {
    const closed = await buildTestApp({ signUp: 'closed' }, { url: env.testApp.databaseUrl });
    try {
      const { context, page, problems } = await openPage({ ...env, url: await closed.app.listen({ port: 0, host: '127.0.0.1' }) });
      try {
        await page.goto('/sign-in');
        await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
        expect(await page.getByRole('link', { name: 'Create an account' }).count()).toBe(0);
        await page.goto('/sign-up');
        await page.getByRole('heading', { level: 1, name: 'Sign-up is closed' }).waitFor();
        expect(await page.getByRole('button', { name: 'Create account' }).count()).toBe(0);
        await page.getByRole('main').getByRole('link', { name: 'Sign in' }).click();
        await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
        expect(problems.list).toEqual([]);
      } finally {
        await context.close();
      }
    } finally {
      await closed.close();
    }
  });

  it('signs out, and then every page asks to sign in again', async () => {
    const { context, page, problems } = await openPage(env);
    try {
      await signIn(page, bob.login, PASSWORD);
      // A second tab of the same browser stays open on the apiary while the first one signs out.
      const other = await context.newPage();
      await other.goto('/');
      await other.getByRole('heading', { level: 1, name: 'Apiary' }).waitFor();
      await page.getByRole('button', { name: /Sign out/ }).click();
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      expect((await context.cookies()).find((c) => c.name === 'service_session')).toBeUndefined();
      // The other tab learns it on its next request (UNAUTHENTICATED) and asks to sign in, keeping where it was.
      await other.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Profile' }).click();
      await other.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      expect(new URL(other.url()).search).toBe(`?next=${encodeURIComponent('/profile')}`);
      await other.getByText('Your session has ended.').waitFor();
      await page.goto('/profile');
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      expect(new URL(page.url()).search).toBe(`?next=${encodeURIComponent('/profile')}`);
      // Signing in returns to the page that was asked for.
      await page.getByLabel('Login').fill(bob.login);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { level: 1, name: 'Profile' }).waitFor();
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });

  // A beekeeper could not see where else they were signed in, end another browser's session, or change their password.
  it('changes the password and signs out another browser from the profile page', async () => {
    const login = `carol_${suffix}`;
    const here = await openPage(env);
    const there = await openPage(env);
    const ended = there.page.getByText('Your session has ended.');
    try {
      await signUp(here.page, login, PASSWORD);
      await signIn(there.page, login, PASSWORD);
      const page = here.page;
      await page.goto('/profile');
      const sessions = page.getByRole('list', { name: 'Signed-in browsers' }).getByRole('listitem');
      await expect.poll(() => sessions.count()).toBe(2);
      expect(await sessions.filter({ hasText: 'This browser' }).innerText()).toMatch(/^Chrome on Linux/);

      // A wrong current password is tied to its field only, and signs nobody out.
      const current = page.getByLabel('Current password');
      const next = page.getByLabel('New password', { exact: true });
      await current.fill('not my password');
      await next.fill('a brand new password');
      await page.getByLabel('Repeat the new password').fill('a brand new password');
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByRole('alert').waitFor();
      expect(await page.getByRole('alert').textContent()).toBe('The current password is wrong.');
      const described = (field: Locator) => field.evaluate((element) => (element.getAttribute('aria-describedby') ?? '').split(' ').map((id) => document.getElementById(id)?.textContent));
      expect(await current.getAttribute('aria-invalid')).toBe('true');
      expect(await described(current)).toEqual(['The current password is wrong.']);
      expect(await current.evaluate((element) => element === document.activeElement)).toBe(true);
      expect(await next.getAttribute('aria-invalid')).toBeNull();
      expect(await described(next)).toEqual(['At least 10 characters.']);

      await current.fill(PASSWORD);
      await page.getByRole('button', { name: 'Change password' }).click();
      // Two password hashes: past expect.poll's second on a busy machine.
      const status = page.locator('.password-form [role=status]', { hasText: /./ });
      await status.waitFor();
      expect(await status.textContent()).toBe('Password changed. Signed out the other session; this one stays signed in. Your API tokens still work.');
      await expect.poll(() => sessions.count()).toBe(1);
      expect(await page.getByRole('alert').count()).toBe(0);
      await there.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Profile' }).click();
      await ended.waitFor();

      // Signed in there again with the new password, and signed out from here.
      await signIn(there.page, login, 'a brand new password');
      await page.setViewportSize(PHONE);
      await page.reload();
      await expect.poll(() => sessions.count()).toBe(2);
      const other = sessions.filter({ hasNotText: 'This browser' });
      await other.getByRole('button', { name: /^Sign out Chrome on Linux, signed in / }).click();
      await other.getByRole('button', { name: /^Sign out now/ }).click();
      await expect.poll(() => page.locator('.sessions-card').getByRole('status').textContent()).toBe('Signed out Chrome on Linux.');
      await expect.poll(() => sessions.count()).toBe(1);
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Where you are signed in');
      expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
      await screenshot(page, 'profile-sign-ins-phone');
      await there.page.reload();
      await ended.waitFor();
      expect([...here.problems.list, ...there.problems.list]).toEqual([]);
    } finally {
      await here.context.close();
      await there.context.close();
    }
  }, 60_000); // four sign-ins and a password change, each a password hash, on a busy machine
});
