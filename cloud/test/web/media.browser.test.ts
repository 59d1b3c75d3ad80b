/**
 * The entrance page against the real video and live gateways: heatmaps rendered from uploaded trajectories, a clip
 * uploaded through the page (and one forged by another origin, refused), transcoded and played, the live view with
 * a simulated entrance camera (its device REST calls made here as the agent makes them, its HLS published by the
 * real ffmpeg: no Pi camera here), and the camera's online badge on the overview.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Page, WebSocketRoute } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config.ts';
import { openPage, postJson, screenshot, signUp, startWebTest, type PageProblems, type WebTestEnvironment } from './browser.ts';

const FFMPEG = process.env.FFMPEG_PATH ?? 'ffmpeg';
const PASSWORD = 'correct horse battery';

let env: WebTestEnvironment;
let page: Page;
let problems: PageProblems;
let closePage: () => Promise<void>;
let deviceToken: string;
let workDir: string;
/** A short H.264 clip, as the entrance camera records them. */
let clipFile: string;
const suffix = randomBytes(3).toString('hex');
const boxId = `gate-${suffix}`;
const hiveId = `hive-${suffix}`;

/** A GraphQL call with the page's session cookie, as the app makes it. */
async function graphqlInPage<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const answer = await page.evaluate(
    async ([q, v]) => (await fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: q, variables: v }) })).json(),
    [query, variables] as const,
  );
  const { data, errors } = answer as { data?: T; errors?: unknown };
  if (errors) throw new Error(`GraphQL errors: ${JSON.stringify(errors)}`);
  return data!;
}

async function device(pathname: string, body: Record<string, unknown>) {
  const answer = await postJson(`${env.url}${pathname}`, deviceToken, body);
  if (answer.status >= 300) throw new Error(`${pathname} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body as Record<string, unknown>;
}

interface StartCommand {
  id: string;
  sessionId: string;
  payload: { publisherUrl: string; publishToken: string };
}

/** Polls as the camera does until the cloud hands it START_STREAM. */
async function pollForStart(report: Record<string, unknown>): Promise<StartCommand> {
  let start: StartCommand | undefined;
  await expect
    .poll(
      async () => {
        const polled = (await device('/api/entrance-live/device/poll', { ...report, limit: 5 })) as { commands: (StartCommand & { commandType: string })[] };
        start = polled.commands.find((c) => c.commandType === 'START_STREAM');
        return Boolean(start);
      },
      { timeout: 15_000, interval: 500 },
    )
    .toBe(true);
  return start!;
}

async function openEntrancePage() {
  await page.goto(`/boxes/${boxId}`);
  await page.getByRole('heading', { level: 1, name: `Entrance · box ${boxId}` }).waitFor();
}

beforeAll(async () => {
  workDir = mkdtempSync(path.join(tmpdir(), 'hivegate-web-real-media-'));
  clipFile = path.join(workDir, 'entrance.mp4');
  execFileSync(FFMPEG, ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=15', '-t', '4', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', clipFile]);
  // Heatmaps render a second after trajectories arrive instead of the default ten.
  env = await startWebTest({ heatmaps: { ...defaultConfig().heatmaps, renderDebounceSeconds: 1 } });
  const opened = await openPage(env);
  page = opened.page;
  problems = opened.problems;
  closePage = () => opened.context.close();
  await signUp(page, `media_${suffix}`, PASSWORD);
  const created = await graphqlInPage<{ createApiToken: { token: string } }>('mutation { createApiToken(name: "entrance camera", scopes: ["ingest", "device"]) { token } }');
  deviceToken = created.createApiToken.token;
  // The box exists for the overview once it has counted bees.
  expect(await postJson(`${env.url}/entrance/v1/movement`, deviceToken, { hiveId, boxId, beesIn: 3, beesOut: 1 })).toMatchObject({ status: 200 });
}, 120_000);

afterAll(async () => {
  await closePage?.();
  await env?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe('entrance page on the real gateways', () => {
  it('shows the heatmap rendered from uploaded trajectories, once its render job has run', async () => {
    const tracks = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [String(i), Array.from({ length: 30 }, (_, k) => [100 + i * 10 + k, 400 - k * 10])]));
    const answer = await postJson(`${env.url}/api/entrance-heatmaps/trajectories`, deviceToken, { boxId, timestamp: new Date().toISOString(), frameDimensions: { width: 640, height: 480 }, trackHistory: tracks });
    expect(answer.status).toBe(200);
    // At once: the day is listed before its picture is drawn, and the page re-reads until it is.
    await openEntrancePage();
    const image = page.locator('img[alt^="Heatmap of bee movement"]').first();
    await image.waitFor({ timeout: 20_000 });
    expect(await image.getAttribute('alt')).toContain('20 bee trajectories');
    await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth), { timeout: 10_000 }).toBe(640);
    // A signed media URL of this origin, which the page's policy allows.
    const src = new URL((await image.getAttribute('src'))!);
    expect(src.origin).toBe(new URL(env.url).origin);
    expect(src.pathname).toMatch(/^\/media\/[^/]+\/heatmaps\/[^/]+\/\d{4}-\d{2}-\d{2}\.png$/);
    expect(problems.list).toEqual([]);
  });

  it('uploads a clip through the page, and plays it once it is processed', async () => {
    await openEntrancePage();
    const uploads: Record<string, string>[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url().endsWith('/graphql') && /^multipart\//.test(request.headers()['content-type'] ?? '')) uploads.push(request.headers());
    });
    await page.getByLabel('Video file').setInputFiles(clipFile);
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByText(/^Uploaded entrance\.mp4\./).waitFor({ timeout: 30_000 });
    // Authenticated by the session cookie alone (the page holds no token), with the header that proves it is the app.
    expect(uploads).toHaveLength(1);
    expect(uploads[0]).toMatchObject({ 'x-requested-with': 'XMLHttpRequest' });
    expect(uploads[0]).not.toHaveProperty('authorization');
    const clips = page.getByRole('list', { name: 'Clips, newest first' });
    await clips.getByText('Ready').first().waitFor({ timeout: 60_000 });
    await clips.getByRole('button', { name: /^Play Clip from/ }).first().click();
    const video = page.locator('.clip-player video');
    await expect.poll(() => video.evaluate((v: HTMLVideoElement) => v.currentTime), { timeout: 20_000, interval: 250 }).toBeGreaterThan(0.5);
    expect(problems.list).toEqual([]);
  }, 120_000);

  it('deletes a clip only after asking again, and stops playing it', async () => {
    const clips = page.getByRole('list', { name: 'Clips, newest first' });
    const items = clips.getByRole('listitem');
    const before = await items.count();
    expect(before).toBeGreaterThan(0);
    const first = items.first();
    const label = (await first.locator('.clip-title').textContent())!;
    await first.getByRole('button', { name: `Delete ${label}`, exact: true }).click();
    // The first press only asks; "Keep" takes it back and nothing is deleted.
    await first.getByRole('button', { name: 'Keep' }).click();
    expect(await items.count()).toBe(before);
    await first.getByRole('button', { name: `Delete ${label}`, exact: true }).click();
    await first.getByRole('button', { name: `Delete now ${label}` }).click();
    await expect.poll(() => items.count(), { timeout: 10_000 }).toBe(before - 1);
    expect(await page.locator('.clip-player video').count()).toBe(0);
    const left = await graphqlInPage<{ gateVideos: unknown[] }>('query ($b: ID!) { gateVideos(boxId: $b) { id } }', { b: boxId });
    expect(left.gateVideos).toHaveLength(before - 1);
    expect(problems.list).toEqual([]);
  }, 60_000);

  it('refuses what a page of another origin tries with the session cookie: a clip upload, a live subscription', async () => {
    // Another port of 127.0.0.1: another origin but the same site, so the SameSite=Lax session cookie still goes along
    // and only the server's CSRF check stands in the way.
    const attacker: Server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>elsewhere</title>'));
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    const attackerPage = await page.context().newPage();
    const arrived: IncomingHttpHeaders[] = [];
    const observe = (request: IncomingMessage) => {
      if (request.method === 'POST' && request.url === '/graphql' && /^multipart\//.test(request.headers['content-type'] ?? '')) arrived.push(request.headers);
    };
    const upgrades: IncomingHttpHeaders[] = [];
    const observeUpgrade = (request: IncomingMessage) => upgrades.push(request.headers);
    env.testApp.app.server.on('request', observe);
    env.testApp.app.server.on('upgrade', observeUpgrade);
    try {
      await attackerPage.goto(`http://127.0.0.1:${(attacker.address() as { port: number }).port}/`);
      const countClips = async () => (await graphqlInPage<{ gateVideos: unknown[] }>('query ($b: ID!) { gateVideos(boxId: $b) { id } }', { b: boxId })).gateVideos.length;
      const clipsBefore = await countClips();
      const forged = attackerPage.waitForResponse((response) => response.url() === `${env.url}/graphql`);
      const video = readFileSync(clipFile).toString('base64');
      const withProofHeader = await attackerPage.evaluate(
        async ([target, box, base64]) => {
          const form = () => {
            const data = new FormData();
            data.append('operations', JSON.stringify({ query: 'mutation ($file: Upload!, $boxId: ID!) { uploadGateVideo(file: $file, boxId: $boxId) }', variables: { file: null, boxId: box } }));
            data.append('map', JSON.stringify({ 0: ['variables.file'] }));
            data.append('0', new Blob([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], { type: 'video/mp4' }), 'forged.mp4');
            return data;
          };
          // A "simple" request: sent without asking, cookie included; its answer stays opaque to this page.
          await fetch(target, { method: 'POST', mode: 'no-cors', credentials: 'include', body: form() });
          // A header of its own makes the browser ask first (preflight), and the server grants this origin nothing.
          return fetch(target, { method: 'POST', credentials: 'include', headers: { 'x-requested-with': 'XMLHttpRequest' }, body: form() }).then(
            () => 'sent',
            () => 'blocked by the browser',
          );
        },
        [`${env.url}/graphql`, boxId, video] as const,
      );
      const response = await forged;
      // It reached the server with the session cookie and without the proof header, and was refused before any upload.
      expect(arrived).toHaveLength(1);
      expect(arrived[0]!.cookie).toContain('service_session=');
      expect(arrived[0]).not.toHaveProperty('x-requested-with');
      expect(response.status()).toBe(403);
      expect(withProofHeader).toBe('blocked by the browser');
      expect(await countClips()).toBe(clipsBefore);

      // A websocket needs no preflight either: the server looks at its Origin before taking the cookie.
      const subscriptionAnswer = await attackerPage.evaluate(
        ([url, box]) =>
          new Promise<string>((resolve) => {
            const socket = new WebSocket(url, 'graphql-transport-ws');
            socket.onopen = () => socket.send(JSON.stringify({ type: 'connection_init', payload: {} }));
            socket.onmessage = (event: MessageEvent<string>) => {
              const message = JSON.parse(event.data) as { type: string; payload?: unknown };
              const subscription = { query: 'subscription ($b: ID!) { entranceLiveStreamSessionChanged(boxId: $b) { id playbackUrl } }', variables: { b: box } };
              if (message.type === 'connection_ack') socket.send(JSON.stringify({ id: '1', type: 'subscribe', payload: subscription }));
              else if (message.type === 'error') resolve((message.payload as { message: string }[])[0]!.message);
              else if (message.type === 'next') resolve(`data: ${JSON.stringify(message.payload)}`);
            };
            socket.onclose = () => resolve('closed');
          }),
        [`${env.url.replace(/^http/, 'ws')}/graphql`, boxId] as const,
      );
      expect(upgrades.at(-1)?.cookie).toContain('service_session=');
      expect(subscriptionAnswer).toBe(`the session cookie is not accepted from ${new URL(attackerPage.url()).origin}: send a token in connection_init`);
    } finally {
      env.testApp.app.server.off('upgrade', observeUpgrade);
      env.testApp.app.server.off('request', observe);
      await attackerPage.close();
      await new Promise((resolve) => attacker.close(resolve));
    }
  });

  it('says the camera is offline when a live view starts without it', async () => {
    // A camera set up (its token made) that has not come online yet.
    const offlineBox = `offline-${suffix}`;
    await graphqlInPage(`mutation { createApiToken(name: "not yet online", scopes: ["device"], boxIds: ["${offlineBox}"]) { token } }`);
    await page.goto(`/boxes/${offlineBox}`);
    await page.getByRole('button', { name: 'Start live view' }).click();
    const status = page.locator('.live-card [role="status"]');
    await status.getByText('The entrance camera is offline.').waitFor({ timeout: 10_000 });
    await page.getByRole('button', { name: 'Stop' }).click();
    await expect.poll(() => status.innerText(), { timeout: 10_000 }).toMatch(/stopped|ended|No live stream/);
  });

  it('plays the live stream a simulated camera publishes, pushed by the subscription, then stops it', async () => {
    // The camera (simulated: no Pi camera here) reports in, then follows the commands it polls for.
    const deviceId = `sim-${suffix}`;
    const report = { boxId, deviceId, appVersion: 'test', cameraStatus: 'ready', publisherState: 'idle' };
    await device('/api/entrance-live/device/status', report);
    await openEntrancePage();
    const liveReads: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/graphql') && request.postData()?.includes('"operationName":"LiveSession"')) liveReads.push(request.url());
    });
    const subscribed = page.waitForEvent('websocket', (socket) => socket.url().endsWith('/graphql'));
    await page.getByRole('button', { name: 'Start live view' }).click();
    const socket = await subscribed;
    const pushed: string[] = [];
    socket.on('framereceived', (frame) => pushed.push(String(frame.payload)));

    let publisher: ChildProcess | undefined;
    try {
      const start = await pollForStart(report);
      const sessionId = start.sessionId;
      await device('/api/entrance-live/device/command-ack', { boxId, commandId: start.id, status: 'accepted', payload: { sessionId, relayProtocol: 'hls' } });
      await device('/api/entrance-live/device/event', { boxId, sessionId, eventType: 'STREAM_STARTING', payload: {} });
      // STREAM_ACTIVE before the first playlist, as a device may well report it: the playback URL comes later.
      await device('/api/entrance-live/device/event', { boxId, sessionId, eventType: 'STREAM_ACTIVE', payload: {} });
      const status = page.locator('.live-card [role="status"]');
      await status.getByText('Live', { exact: true }).waitFor({ timeout: 20_000 });
      publisher = spawn(FFMPEG, [
        '-v', 'error', '-re', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=15', '-t', '60', '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency',
        '-g', '15', '-pix_fmt', 'yuv420p', '-f', 'hls', '-method', 'PUT', '-http_persistent', '1', '-hls_time', '1', '-hls_list_size', '6',
        '-hls_flags', 'delete_segments+program_date_time', '-headers', `Authorization: Bearer ${start.payload.publishToken}\r\n`, start.payload.publisherUrl,
      ], { stdio: 'ignore' });

      const video = page.locator('.live-card video');
      await video.waitFor({ timeout: 20_000 });
      await expect.poll(() => video.evaluate((v: HTMLVideoElement) => v.currentTime), { timeout: 30_000, interval: 500 }).toBeGreaterThan(1);
      // The playback URL arrived over the subscription (the page does not re-read while it is open).
      expect(pushed.some((frame) => frame.includes('"playbackUrl":"http'))).toBe(true);
      const before = liveReads.length;
      await page.waitForTimeout(6_000);
      expect(liveReads.length).toBe(before);
      await screenshot(page, 'entrance-real-gateways-desktop');

      await page.getByRole('button', { name: 'Stop' }).click();
      await expect.poll(async () => (await graphqlInPage<{ entranceLiveStreamSession: unknown }>('query ($b: ID!) { entranceLiveStreamSession(boxId: $b) { status } }', { b: boxId })).entranceLiveStreamSession, { timeout: 20_000 }).toSatisfy(
        (s: unknown) => s === null || ['STOPPING', 'STOPPED'].includes((s as { status: string }).status),
      );
    } finally {
      publisher?.kill('SIGTERM');
    }
  }, 120_000);

  it('shows a camera that pushes JPEG frames as a live MJPEG picture', async () => {
    // A camera of the existing kind (simulated: no Pi camera here) that can only push JPEG frames.
    const jpegBox = `jpeg-${suffix}`;
    const report = { boxId: jpegBox, deviceId: `jpeg-${suffix}`, appVersion: 'test', cameraStatus: 'ready', publisherState: 'idle', status: { relayProtocols: ['http-jpeg-push'] } };
    await device('/api/entrance-live/device/status', report);
    const frames = [0, 1].map((i) => execFileSync(FFMPEG, ['-v', 'error', '-f', 'lavfi', '-i', `testsrc=size=320x240:rate=1:decimals=${i}`, '-frames:v', '1', '-f', 'mjpeg', 'pipe:1']));
    // Regression: the page missed what happened between the start and its status subscription's opening, and sat
    // at "requested" until the next keep-alive. The subscription is held here until the camera is live.
    let releaseSubscription!: () => void;
    const subscriptionHeld = new Promise<void>((resolve) => (releaseSubscription = resolve));
    await page.routeWebSocket(/\/graphql$/, (socket: WebSocketRoute) => {
      const early: (string | Buffer)[] = [];
      let server: WebSocketRoute | undefined;
      socket.onMessage((message) => (server ? server.send(message) : early.push(message)));
      void subscriptionHeld.then(() => {
        server = socket.connectToServer();
        server.onMessage((message) => socket.send(message));
        for (const message of early) server.send(message);
      });
    });
    await page.goto(`/boxes/${jpegBox}`);
    await page.getByRole('button', { name: 'Start live view' }).click();
    const start = await pollForStart(report);
    const sessionId = start.sessionId;
    expect(start.payload.publisherUrl).toMatch(/\/frame$/);
    await device('/api/entrance-live/device/command-ack', { boxId: jpegBox, commandId: start.id, status: 'accepted', payload: { sessionId, relayProtocol: 'http-jpeg-push' } });
    await device('/api/entrance-live/device/event', { boxId: jpegBox, sessionId, eventType: 'STREAM_ACTIVE', payload: {} });
    let pushing = true;
    let liveFramesPushed = 0;
    const pusher = (async () => {
      for (let i = 0; pushing; i++) {
        const answer = await fetch(start.payload.publisherUrl, { method: 'POST', headers: { 'content-type': 'image/jpeg', 'x-publish-token': start.payload.publishToken }, body: frames[i % 2] });
        expect(answer.status).toBe(200);
        liveFramesPushed++;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    try {
      await expect.poll(() => liveFramesPushed, { timeout: 10_000 }).toBeGreaterThan(0);
      releaseSubscription();
      const picture = page.locator('.live-card img[alt^="Live picture of box"]');
      // Well inside the 30 s keep-alive, which would also have shown it.
      await picture.waitFor({ timeout: 10_000 });
      expect(new URL((await picture.getAttribute('src'))!).pathname).toMatch(/\/live\/[^/]+\/stream\.mjpeg$/);
      await expect.poll(() => picture.evaluate((img: HTMLImageElement) => img.naturalWidth), { timeout: 15_000 }).toBe(320);
      expect(await page.locator('.live-card video').count()).toBe(0);
      await screenshot(page, 'entrance-live-mjpeg-desktop');
      await page.getByRole('button', { name: 'Stop' }).click();
    } finally {
      pushing = false;
      releaseSubscription();
      await pusher.catch(() => undefined);
      await page.unrouteAll({ behavior: 'ignoreErrors' });
    }
    expect(problems.list).toEqual([]);
  }, 90_000);

  it('shows on the overview that the camera is online', async () => {
    await device('/api/entrance-live/device/status', { boxId, deviceId: `sim-${suffix}`, appVersion: 'test', cameraStatus: 'ready', publisherState: 'idle' });
    await page.goto('/');
    const row = page.getByRole('listitem').filter({ has: page.getByRole('link', { name: `Box ${boxId}` }) });
    await row.getByText('Camera online').waitFor({ timeout: 10_000 });
  });
});
