import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ensureWebBuild } from '../../src/web/build.ts';
import type { Config } from '../../src/config.ts';
import { buildTestApp, type TestApp } from '../helper.ts';

/** Debian's Chromium (apt-get install -y chromium); Playwright's own browser download does not work offline. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export const SCREENSHOT_DIR = fileURLToPath(new URL('../../../test-results/screenshots/', import.meta.url));
export const DESKTOP = { width: 1280, height: 860 };
export const PHONE = { width: 390, height: 844 };

export interface WebTestEnvironment {
  testApp: TestApp;
  url: string;
  browser: Browser;
  close: () => Promise<void>;
}

/** Builds the app if its build is stale, serves the real cloud on a fresh database over loopback, and opens Chromium. */
export async function startWebTest(overrides: Partial<Config> = {}): Promise<WebTestEnvironment> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`Chromium not found at ${CHROMIUM_PATH}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`);
  await ensureWebBuild();
  const testApp = await buildTestApp(overrides);
  const address = await testApp.app.listen({ port: 0, host: '127.0.0.1' });
  let browser: Browser;
  try {
    // launch() starts Chromium on a fresh temporary profile (user-data-dir) of its own and deletes it on close.
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, timeout: 30_000 });
  } catch (err) {
    await testApp.close();
    throw err;
  }
  return {
    testApp,
    url: address,
    browser,
    close: async () => {
      await browser.close();
      await testApp.close();
    },
  };
}

export interface PageProblems {
  /** Console errors, uncaught exceptions and content-security-policy violations seen so far. */
  list: string[];
}

/**
 * Records what goes wrong in a page: console errors, uncaught exceptions, content-security-policy violations, and
 * 400 answers (a request the server refused as malformed, e.g. a GraphQL document that does not fit its schema).
 * `allowed` lists console messages a test expects.
 */
export function recordProblems(page: Page, allowed: RegExp[] = []): PageProblems {
  const problems: PageProblems = { list: [] };
  page.on('console', (message) => {
    const text = message.text();
    // Chromium logs every 4xx answer; the 400s are reported with their bodies below.
    if (message.type() === 'error' && !/^Failed to load resource: the server responded with a status of 400/.test(text) && !allowed.some((a) => a.test(text))) {
      problems.list.push(`console: ${text}`);
    }
  });
  page.on('pageerror', (error) => problems.list.push(`uncaught: ${error.message}`));
  page.on('response', async (response) => {
    if (response.status() !== 400) return;
    const body = await response.text().catch(() => '');
    problems.list.push(`400 from ${new URL(response.url()).pathname}: ${body}`);
  });
  void page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`));
  });
  return problems;
}

/** A fresh browser context (no cookies) and page that records everything that went wrong in it. */
export async function openPage(env: WebTestEnvironment, viewport = DESKTOP): Promise<{ context: BrowserContext; page: Page; problems: PageProblems }> {
  const context = await env.browser.newContext({ viewport, baseURL: env.url, locale: 'en-GB', timezoneId: 'UTC' });
  const page = await context.newPage();
  return { context, page, problems: recordProblems(page) };
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true, animations: 'disabled' });
  return file;
}

export async function postJson(url: string, token: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json().catch(() => undefined) };
}

/** Signs up through the sign-up page and waits for the apiary. */
/** Signs in through the form and waits for the apiary. */
export async function signIn(page: Page, login: string, password: string): Promise<void> {
  await page.goto('/sign-in');
  await page.getByLabel('Login').fill(login);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Apiary' }).waitFor();
}

export async function signUp(page: Page, login: string, password: string): Promise<void> {
  await page.goto('/sign-up');
  await page.getByLabel('Login').fill(login);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { level: 1, name: 'Apiary' }).waitFor();
}
