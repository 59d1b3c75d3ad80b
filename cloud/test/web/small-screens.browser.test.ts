/**
 * The web app on phone-sized screens (320 and 375 px wide, the narrowest phones in use) in Chromium against the real
 * cloud: the API token table, the entrance's counts of today, the charts' time labels and their read-out on touch.
 */
import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESKTOP, openPage, PHONE, postJson, recordProblems, screenshot, signIn, signUp, startWebTest, type WebTestEnvironment } from './browser.ts';

const PASSWORD = 'correct horse battery';
const NARROW_PHONES = [
  { width: 320, height: 640 },
  { width: 375, height: 740 },
];

let env: WebTestEnvironment;
const suffix = randomBytes(3).toString('hex');
const user = { login: `phone_${suffix}`, hive: `orchard-${suffix}`, box: `porch-${suffix}` };
/** A box that has an API token and has not counted yet. */
const waitingBox = `shed-door-${suffix}`;
/** A box whose camera has connected (with a token for every box) and has not counted yet. */
const connectedBox = `attic-${suffix}`;
/** Ids as long as the server takes (128 characters), one word without a hyphen to break at. */
const longIds = { hive: `Hive${'H'.repeat(118)}${suffix}`, box: `Box${'B'.repeat(119)}${suffix}` };

/** Makes an API token through the app's own GraphQL endpoint, with the session of the signed-in page. */
async function createToken(page: Page, name: string, scopes: string[], boxIds: string[] | null): Promise<{ token: string; id: string }> {
  return page.evaluate(
    async ({ name, scopes, boxIds }) => {
      const response = await fetch('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query: 'mutation ($name: String!, $scopes: [String!], $boxIds: [ID!]) { createApiToken(name: $name, scopes: $scopes, boxIds: $boxIds) { token apiToken { id } } }',
          variables: { name, scopes, boxIds },
        }),
      });
      const { data } = (await response.json()) as { data: { createApiToken: { token: string; apiToken: { id: string } } } };
      return { token: data.createApiToken.token, id: data.createApiToken.apiToken.id };
    },
    { name, scopes, boxIds },
  );
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
    const device = await createToken(page, 'scale in the garden', ['ingest', 'device'], null);
    await createToken(page, 'entrance camera', ['ingest', 'device', 'read', 'control'], [user.box]);
    await createToken(page, 'new camera', ['ingest', 'device'], [waitingBox]);
    // One long word (a device id, say) may break anywhere; nothing else in the table may.
    await createToken(page, `station-${'x'.repeat(60)}`, ['read'], null);
    const old = await createToken(page, 'old weather station', ['ingest'], null);
    await page.evaluate(async (id) => {
      await fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: 'mutation ($id: ID!) { revokeApiToken(id: $id) }', variables: { id } }) });
    }, old.id);

    // A busy colony's day: six-digit counts.
    const now = Math.floor(Date.now() / 1000);
    const startOfDay = Math.floor(now / 86_400) * 86_400;
    const movement = [
      { beesIn: 400_000, beesOut: 80_000 },
      { beesIn: 254_321, beesOut: 43_456 },
    ].map((counts, k) => ({ hiveId: user.hive, boxId: user.box, timestamp: Math.max(startOfDay, now - 120 + k * 60), avgSpeed: 4, p95Speed: 8, ...counts }));
    expect(await postJson(`${env.url}/entrance/v1/movement`, device.token, movement)).toEqual({ status: 200, body: { message: 'OK' } });
    expect((await postJson(`${env.url}/api/entrance-live/device/status`, device.token, { boxId: connectedBox, cameraStatus: {}, publisherState: {} })).status).toBe(200);
    // A day of hourly readings.
    const metrics = Array.from({ length: 24 }, (_, k) => ({ hiveId: user.hive, timestamp: now - k * 3600 - 60, fields: { temperatureCelsius: 33 + (k % 5) * 0.4 } }));
    expect(await postJson(`${env.url}/iot/v1/metrics`, device.token, metrics)).toEqual({ status: 200, body: { message: 'OK' } });
    const longMovement = [{ hiveId: longIds.hive, boxId: longIds.box, timestamp: Math.max(startOfDay, now - 60), beesIn: 0, beesOut: 0 }];
    expect(await postJson(`${env.url}/entrance/v1/movement`, device.token, longMovement)).toEqual({ status: 200, body: { message: 'OK' } });
  } finally {
    await context.close();
  }
}, 120_000);

afterAll(async () => {
  await env?.close();
});

describe('web app on narrow phones', () => {
  // Every cell of the table broke anywhere, so on a phone the columns shrank to one letter a line ("N/a/m/e"), in a box
  // capped at 24rem that scrolled on its own.
  it('shows the API tokens readably from 320 px up (a card each below the desktop), and as a table on the desktop', async () => {
    const { context, page, problems } = await openPage(env);
    try {
      await signIn(page, user.login, PASSWORD);
      // Below the desktop the list has too little room for seven columns (beside the form on a tablet, too): a card per token.
      for (const viewport of [...NARROW_PHONES, { width: 640, height: 800 }, { width: 861, height: 800 }, { width: 1024, height: 800 }, DESKTOP]) {
        const cards = viewport.width < DESKTOP.width;
        await page.setViewportSize(viewport);
        await page.goto('/profile');
        // The table's own scroll box (the section around it has the same name).
        const wrap = page.locator('.table-wrap', { has: page.locator('.tokens-table') });
        await wrap.getByRole('row', { name: /old weather station/ }).waitFor();
        const words = await wrap.evaluate((element) => {
          const broken: string[] = [];
          const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
          for (let node = walker.nextNode() as Text | null; node; node = walker.nextNode() as Text | null) {
            if (node.parentElement?.closest('.visually-hidden')) continue;
            // Lines may break at spaces and hyphens (porch-2 / b), not inside the parts between.
            for (const match of node.data.matchAll(/[^\s-]+/g)) {
              // A word longer than a phone is wide has to break.
              if (match[0].length > 30) continue;
              const range = document.createRange();
              range.setStart(node, match.index);
              range.setEnd(node, match.index + match[0].length);
              const lineTops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
              if (lineTops.size > 1) broken.push(match[0]);
            }
          }
          return broken;
        });
        expect(words, `words broken across lines at ${viewport.width} px`).toEqual([]);
        // All of it is on the page: nothing hidden to the side, no box scrolling inside the page.
        const inner = await wrap.evaluate((element) => ({ sideways: element.scrollWidth - element.clientWidth, down: element.scrollHeight - element.clientHeight }));
        expect(inner.sideways, `${viewport.width} px`).toBe(0);
        if (cards) expect(inner.down, `${viewport.width} px`).toBe(0);
        expect(await sidewaysOverflow(page), `${viewport.width} px`).toBeLessThanOrEqual(0);
        // The revoke button is on the screen, and on a card each line says which column it is.
        const camera = wrap.getByRole('row', { name: /entrance camera/ });
        const revoke = (await camera.getByRole('button', { name: 'Revoke entrance camera' }).boundingBox())!;
        expect(revoke.x + revoke.width).toBeLessThanOrEqual(viewport.width);
        if (cards) {
          expect(await camera.innerText()).toMatch(/Permissions\s+ingest, device, read, control[\s\S]*Boxes\s+porch-/);
          await screenshot(page, `profile-tokens-${viewport.width}`);
        }
      }

      // The desktop keeps its table: a header row, and a row of cells per token.
      await page.setViewportSize(DESKTOP);
      const table = page.locator('.tokens-table');
      expect(await table.locator('thead').isVisible()).toBe(true);
      expect(await table.locator('tbody tr').first().evaluate((row) => getComputedStyle(row).display)).toBe('table-row');
      expect(await table.getByRole('row', { name: /entrance camera/ }).innerText()).not.toContain('Permissions');
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });

  // The counts of today stood in one row that did not wrap: five digits overflowed a 320 px screen, six a 375 px one.
  it("keeps today's six-digit entrance counts on the screen of a narrow phone", async () => {
    const { context, page, problems } = await openPage(env);
    try {
      await signIn(page, user.login, PASSWORD);
      for (const viewport of NARROW_PHONES) {
        await page.setViewportSize(viewport);
        await page.goto(`/boxes/${user.box}`);
        const today = page.getByRole('region', { name: 'Entrance traffic today' });
        await expect.poll(() => today.innerText()).toMatch(/In today\s+654,321[\s\S]*Out today\s+123,456[\s\S]*Net\s+\+530,865/);
        await page.waitForLoadState('networkidle');
        const outside = await today.locator('dd').evaluateAll((figures) => figures.filter((dd) => dd.getBoundingClientRect().right > document.documentElement.clientWidth).map((dd) => dd.textContent));
        expect(outside, `${viewport.width} px`).toEqual([]);
        expect(await sidewaysOverflow(page), `box page at ${viewport.width} px`).toBeLessThanOrEqual(0);
        await screenshot(page, `entrance-today-${viewport.width}`);

        await page.goto('/');
        await expect.poll(() => page.getByRole('article', { name: `Hive ${user.hive}` }).locator('.traffic-today').innerText()).toMatch(/In\s+654,321/);
        expect(await sidewaysOverflow(page), `apiary at ${viewport.width} px`).toBeLessThanOrEqual(0);
      }
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });

  // A box id of 128 letters never wrapped: the apiary was 1341 px wide on a 390 px phone, a box heading 2366 px on the desktop.
  it('breaks a 128-character hive or box id rather than widen the page, on a phone and on the desktop', async () => {
    const { context, page, problems } = await openPage(env, PHONE);
    try {
      await signIn(page, user.login, PASSWORD);
      for (const viewport of [PHONE, DESKTOP]) {
        await page.setViewportSize(viewport);
        for (const [path, ready] of [
          ['/', () => page.getByRole('link', { name: `Box ${longIds.box}` })],
          [`/hives/${longIds.hive}`, () => page.getByRole('figure', { name: /Traffic per/ })],
          [`/boxes/${longIds.box}`, () => page.getByRole('region', { name: 'Entrance traffic today' })],
        ] as const) {
          await page.goto(path);
          await ready().waitFor();
          await page.waitForLoadState('networkidle');
          const where = `${path.slice(0, 12)}… at ${viewport.width} px`;
          expect(await sidewaysOverflow(page), where).toBeLessThanOrEqual(0);
          if (path.startsWith('/hives/')) {
            // The only count of this box is 0: its axis read 0, 0.2 … 1, fractions of a bee, with no word of the unit.
            const traffic = page.getByRole('figure', { name: /Traffic per/ }).locator('svg');
            const values = await traffic.locator('.axes text.tick-label[text-anchor=end]').allTextContents();
            expect(values, where).toEqual(['0', '1']);
            expect(await traffic.locator('.axis-note').allTextContents()).toEqual(['↑ bees in', '↓ bees out']);
          }
          const wide = await page.locator('h1, h2, nav, a').evaluateAll((elements) =>
            elements.filter((element) => element.getBoundingClientRect().right > document.documentElement.clientWidth + 1).map((element) => element.outerHTML.slice(0, 60)),
          );
          expect(wide, where).toEqual([]);
        }
        await screenshot(page, `long-box-id-${viewport.width}`);
      }
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });

  // A weight posted before a climate sensor's reading read "Weight —" on the apiary: the newest row alone was shown.
  it("shows each field's last value with its age where it is older, on a 320 px phone card and on the hive page", async () => {
    const { context, page, problems } = await openPage(env, NARROW_PHONES[0]);
    try {
      await signIn(page, user.login, PASSWORD);
      const scale = await createToken(page, 'scale and sensor', ['ingest'], null);
      const hive = `sep-${suffix}`;
      const now = Math.floor(Date.now() / 1000);
      expect((await postJson(`${env.url}/iot/v1/metrics`, scale.token, { hiveId: hive, fields: { weightKg: 42.5 }, timestamp: now - 14 * 60 })).status).toBe(200);
      expect((await postJson(`${env.url}/iot/v1/metrics`, scale.token, { hiveId: hive, fields: { temperatureCelsius: 34.5 }, timestamp: now - 60 })).status).toBe(200);
      await page.reload();
      const readings = page.getByRole('article', { name: `Hive ${hive}` }).locator('.readings');
      await expect.poll(() => readings.innerText()).toMatch(/^Temperature\s+34\.5 °C\s+Humidity\s+—\s+Weight\s+42\.5 kg\s+1[45] min ago$/);
      await page.waitForLoadState('networkidle');
      expect(await sidewaysOverflow(page), 'apiary at 320 px').toBeLessThanOrEqual(0);
      const outside = await readings.locator('dd').evaluateAll((values) =>
        values.filter((dd) => dd.getBoundingClientRect().right > (dd.closest('.readings > div') as HTMLElement).getBoundingClientRect().right).map((dd) => dd.textContent),
      );
      expect(outside).toEqual([]);
      await screenshot(page, 'overview-last-values-320');

      await page.goto(`/hives/${hive}`);
      const climate = page.getByRole('region', { name: 'Climate and weight' });
      await expect.poll(() => climate.locator('.readings').innerText()).toMatch(/Weight\s+42\.5 kg\s+1[45] min ago$/);
      expect(await sidewaysOverflow(page), 'hive page at 320 px').toBeLessThanOrEqual(0);
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });

  // A box with a token but no counts had a page of its own, but nothing on the apiary led to it; nor to one whose camera
  // had connected with a token for every box.
  it('lists on the apiary the boxes that have not counted yet: one with only a token, one whose camera connected', async () => {
    const { context, page, problems } = await openPage(env, PHONE);
    try {
      await signIn(page, user.login, PASSWORD);
      const section = page.getByRole('region', { name: 'Boxes not yet in a hive' });
      const rowOf = (boxId: string) => section.getByRole('listitem').filter({ has: page.getByRole('link', { name: `Box ${boxId}` }) });
      await rowOf(waitingBox).getByText('Waiting for first counts').waitFor();
      await rowOf(waitingBox).getByText('Its camera has not connected or sent counts yet.').waitFor();
      await rowOf(connectedBox).getByText('Waiting for first counts').waitFor();
      // Online, or offline if this file has run past the 120 s a device counts as online after its last call.
      await rowOf(connectedBox).getByText(/^Camera (online|offline)/).waitFor();
      await rowOf(connectedBox).getByText('Its camera has connected and has not sent counts yet.').waitFor();
      // Only those boxes: the others count in a hive.
      expect(await section.getByRole('link').allTextContents()).toEqual([`Box ${connectedBox}`, `Box ${waitingBox}`]);
      await rowOf(waitingBox).getByRole('link').click();
      await page.getByRole('heading', { level: 1, name: `Entrance · box ${waitingBox}` }).waitFor();
      await page.getByRole('region', { name: 'Live view' }).waitFor();
      expect(await page.getByText('There is no such box in your apiary.').count()).toBe(0);
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });

  // A 7-day chart had a single time label at 375 px (30 days at 320 px), and tapping a chart showed no value: only a
  // moving mouse did.
  it('labels the time axis of a phone chart at least twice, and reads out the values where a finger taps', { timeout: 60_000 }, async () => {
    const context = await env.browser.newContext({ viewport: NARROW_PHONES[0], baseURL: env.url, locale: 'en-GB', timezoneId: 'UTC', hasTouch: true, isMobile: true });
    const page = await context.newPage();
    const problems = recordProblems(page);
    try {
      await signIn(page, user.login, PASSWORD);
      for (const viewport of NARROW_PHONES) {
        await page.setViewportSize(viewport);
        for (const range of ['7d', '30d']) {
          await page.goto(`/hives/${user.hive}?range=${range}`);
          const temperature = page.getByRole('figure', { name: /Temperature/ });
          await temperature.locator('svg path.line').waitFor();
          const svg = temperature.locator('svg');
          const frame = (await svg.boundingBox())!;
          const labels = await svg.locator('.axes text.tick-label[text-anchor=middle]').evaluateAll((texts) => texts.map((text) => ({ text: text.textContent, box: text.getBoundingClientRect().toJSON() as DOMRect })));
          const where = `${range} at ${viewport.width} px: ${labels.map((l) => l.text).join(', ')}`;
          expect(labels.length, where).toBeGreaterThanOrEqual(2);
          // Side by side, apart, and inside the chart.
          labels.forEach((label, i) => {
            expect(label.box.left, where).toBeGreaterThanOrEqual(frame.x);
            expect(label.box.right, where).toBeLessThanOrEqual(frame.x + frame.width);
            if (i > 0) expect(label.box.left, where).toBeGreaterThan(labels[i - 1]!.box.right + 4);
          });

          // A tap reads out the reading there, and it stays after the finger lifts.
          await svg.tap({ position: { x: frame.width - 16, y: frame.height / 2 } });
          await expect.poll(() => svg.locator('.hover').count(), { message: where }).toBe(1);
          expect(await svg.locator('.hover').textContent()).toMatch(/^\d+ \w+ \d{4}, \d\d:\d\dTemperature: 3\d\.\d °C$/);
          await page.waitForTimeout(300);
          expect(await svg.locator('.hover').count()).toBe(1);
          const traffic = page.getByRole('figure', { name: /Traffic per/ }).locator('svg');
          const trafficFrame = (await traffic.boundingBox())!;
          await traffic.tap({ position: { x: trafficFrame.width - 16, y: trafficFrame.height / 2 } });
          await expect.poll(() => traffic.locator('.hover').count(), { message: where }).toBe(1);
          expect(await traffic.locator('.hover').textContent()).toMatch(/^\d+ \w+ \d{4}, \d\d:\d\dIn: [\d,]+Out: [\d,]+Net: \+[\d,]+$/);
          // A tapped read-out stayed until the next tap on its own chart: a tap elsewhere, or Escape, left it on the screen.
          await expect.poll(() => svg.locator('.hover').count(), { message: where }).toBe(0);
          await page.getByRole('heading', { level: 1 }).tap();
          await expect.poll(() => traffic.locator('.hover').count(), { message: where }).toBe(0);
          await traffic.tap({ position: { x: trafficFrame.width - 16, y: trafficFrame.height / 2 } });
          await expect.poll(() => traffic.locator('.hover').count(), { message: where }).toBe(1);
          await page.keyboard.press('Escape');
          await expect.poll(() => traffic.locator('.hover').count(), { message: where }).toBe(0);
        }
        await screenshot(page, `hive-30d-${viewport.width}`);
      }
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
