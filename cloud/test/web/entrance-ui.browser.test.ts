/**
 * The entrance page's media parts in Chromium: heatmap gallery, stored clips (HLS playback, multipart upload with
 * progress), the live view's states and timers, and the online badges. The gateways behind these operations reach
 * most of these states only through a real camera, so a scripted GraphQL server (scripted-gateway.ts) answers
 * here; the web app, the browser, the HLS media (made with ffmpeg) and the wire formats are real. The same flows
 * against the real gateways are in media.browser.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureWebBuild } from '../../src/web/build.ts';
import { CHROMIUM_ARGS, CHROMIUM_PATH, DESKTOP, PHONE, recordProblems, screenshot } from './browser.ts';
import { startScriptedGateway, type ScriptedState } from './scripted-gateway.ts';

const FFMPEG = process.env.FFMPEG_PATH ?? 'ffmpeg';
const DAY_MS = 86_400_000;

let mediaDir: string;
let gateway: Awaited<ReturnType<typeof startScriptedGateway>>;
let state: ScriptedState;
let browser: Browser;

function ffmpeg(args: string[]) {
  execFileSync(FFMPEG, ['-v', 'error', '-y', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A stored clip as HLS, the same segments as a live playlist (no end tag), a poster, two heatmaps and an upload. */
function makeMedia(dir: string) {
  mkdirSync(path.join(dir, 'clip'));
  mkdirSync(path.join(dir, 'live'));
  ffmpeg(['-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=15', '-t', '8', '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '15', '-pix_fmt', 'yuv420p',
    '-f', 'hls', '-hls_time', '1', '-hls_playlist_type', 'vod', '-hls_segment_filename', path.join(dir, 'clip', 'seg%d.ts'), path.join(dir, 'clip', 'index.m3u8')]);
  for (let i = 0; i < 8; i++) copyFileSync(path.join(dir, 'clip', `seg${i}.ts`), path.join(dir, 'live', `seg${i}.ts`));
  const vod = readFileSync(path.join(dir, 'clip', 'index.m3u8'), 'utf8');
  writeFileSync(path.join(dir, 'live-playlist.m3u8'), vod.replace('#EXT-X-PLAYLIST-TYPE:VOD\n', '').replace('#EXT-X-ENDLIST\n', ''));
  ffmpeg(['-f', 'lavfi', '-i', 'testsrc=size=320x240', '-frames:v', '1', path.join(dir, 'poster.jpg')]);
  ffmpeg(['-f', 'lavfi', '-i', 'mandelbrot=size=320x240', '-frames:v', '1', path.join(dir, 'heat-today.png')]);
  ffmpeg(['-f', 'lavfi', '-i', 'cellauto=size=320x240:rule=30', '-frames:v', '1', path.join(dir, 'heat-before.png')]);
  ffmpeg(['-f', 'lavfi', '-i', 'testsrc=size=160x120:rate=10', '-t', '3', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', path.join(dir, 'upload.mp4')]);
}

async function openEntrance(viewport = DESKTOP, options: { clock?: boolean; allowed?: RegExp[]; timezoneId?: string } = {}) {
  const context = await browser.newContext({ viewport, baseURL: gateway.url, locale: 'en-GB', timezoneId: options.timezoneId ?? 'UTC' });
  const page = await context.newPage();
  // This server has no subscription endpoint, so the live view falls back to re-reading (what is tested here).
  const problems = recordProblems(page, [/WebSocket connection to .*\/graphql' failed/, ...(options.allowed ?? [])]);
  if (options.clock) await page.clock.install();
  await page.goto(`/boxes/${state.boxId}`);
  await page.getByRole('heading', { level: 1, name: `Entrance · box ${state.boxId}` }).waitFor();
  return { context, page, problems };
}

/** The video element's playback position, once it has moved past `seconds`. */
async function waitForPlayback(video: ReturnType<Page['locator']>, seconds: number) {
  await expect
    .poll(() => video.evaluate((element: HTMLVideoElement) => element.currentTime), { timeout: 20_000, interval: 250 })
    .toBeGreaterThan(seconds);
  expect(await video.evaluate((element: HTMLVideoElement) => element.videoWidth)).toBe(320);
}

function callsOf(name: string) {
  return state.calls.filter((c) => c.name === name);
}

beforeAll(async () => {
  mediaDir = mkdtempSync(path.join(tmpdir(), 'hivegate-web-media-'));
  makeMedia(mediaDir);
  await ensureWebBuild();
  gateway = await startScriptedGateway(mediaDir);
  state = gateway.state;
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, timeout: 30_000 });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gateway?.close();
  if (mediaDir) rmSync(mediaDir, { recursive: true, force: true });
});

describe('entrance page media (scripted gateway)', () => {
  it('shows the heatmap gallery and finds a day with the date picker', async () => {
    const today = new Date().toISOString().slice(0, 10);
    const before = new Date(Date.now() - 3 * DAY_MS).toISOString().slice(0, 10);
    state.heatmaps = [
      { id: 'hm2', boxId: state.boxId, date: today, imageURL: gateway.mediaUrl('heat-today.png'), width: 320, height: 240, trajectoryCount: 1234, pointCount: 56789, maxCount: 17, updatedAt: new Date().toISOString(), lastSampleAt: null },
      { id: 'hm1', boxId: state.boxId, date: before, imageURL: gateway.mediaUrl('heat-before.png'), width: 320, height: 240, trajectoryCount: 98, pointCount: 4321, maxCount: 3, updatedAt: new Date(Date.now() - 2 * DAY_MS).toISOString(), lastSampleAt: null },
    ];
    const { context, page, problems } = await openEntrance();
    try {
      const main = page.getByRole('figure').filter({ has: page.locator('img[alt^="Heatmap"]') });
      const image = main.locator('img');
      await expect.poll(() => image.getAttribute('alt')).toMatch(/^Heatmap of bee movement at box b1 on .*, 1,234 bee trajectories$/);
      await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(320);
      expect(await main.innerText()).toMatch(/1,234 trajectories · 56,789 points · busiest spot 17 sightings/);
      // The picture had no key to its colours.
      const scale = main.getByRole('img', { name: /^Colour scale: dark purple for a spot a bee was seen at once, to pale yellow for the busiest spot, 17 sightings$/ });
      expect(await scale.evaluate((bar) => getComputedStyle(bar).backgroundImage)).toMatch(/^linear-gradient\(to right, rgb\(0, 0, 4\) 0%,.*rgb\(252, 255, 164\) 100%\)$/);
      expect(await main.locator('.heatmap-scale-ticks').innerText()).toMatch(/^1\s+10\s+17$/);
      const tickAt = (label: string) => main.locator('.heatmap-scale-ticks span', { hasText: new RegExp(`^${label}$`) }).evaluate((tick) => tick.style.left);
      expect(await tickAt('10')).toBe(`${((Math.log(11) / Math.log(18)) * 100).toFixed(2)}%`);
      // The first request asks for the recent list: the box ids as given and no date.
      expect(callsOf('EntranceHeatmaps')[0]?.variables).toEqual({ boxIds: [state.boxId], date: null, limit: 30 });

      const thumbs = page.getByRole('list', { name: 'Recent days' }).getByRole('button');
      expect(await thumbs.count()).toBe(2);
      await thumbs.nth(1).click();
      expect(await thumbs.nth(1).getAttribute('aria-pressed')).toBe('true');
      await expect.poll(() => image.getAttribute('src')).toContain('heat-before.png');
      await expect.poll(() => main.locator('.heatmap-scale-ticks').innerText()).toMatch(/^1\s+3$/);

      await page.getByLabel('Day (UTC)', { exact: true }).fill(new Date(Date.now() - DAY_MS).toISOString().slice(0, 10));
      await page.locator('p.empty').getByText(/^No heatmap for /).waitFor();
      // The answer to a chosen day appeared without a word to a screen reader: it is said in a polite status.
      const said = page.getByRole('region', { name: 'Daily heatmaps' }).locator('.visually-hidden[role=status]');
      await expect.poll(() => said.textContent()).toMatch(/^No heatmap for \w{3},? \d+ \w{3} \d{4}\.$/);
      await page.getByLabel('Day (UTC)', { exact: true }).fill(before);
      await expect.poll(() => image.getAttribute('src')).toContain('heat-before.png');
      await expect.poll(() => said.textContent()).toMatch(/^Showing \w{3},? \d+ \w{3} \d{4} \(UTC day\): [\d,]+ trajector(y|ies)\.$/);
      expect(callsOf('EntranceHeatmaps').at(-1)?.variables).toEqual({ boxIds: [state.boxId], date: before, limit: 1 });
      await page.getByRole('button', { name: 'Show recent days' }).click();
      await expect.poll(() => thumbs.count()).toBe(2);
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('shows a day whose picture is still being drawn, then the picture once the server has it, without a reload', async () => {
    const today = new Date().toISOString().slice(0, 10);
    // Listed before its first render (the server renders a few seconds after trajectories arrive): no image URL yet.
    state.heatmaps = [{ id: 'hm3', boxId: state.boxId, date: today, imageURL: null, width: 320, height: 240, trajectoryCount: 20, pointCount: 600, maxCount: 4, updatedAt: new Date().toISOString(), lastSampleAt: null }];
    const { context, page, problems } = await openEntrance();
    try {
      const figure = page.locator('figure.heatmap-main');
      await figure.getByText("Drawing this day's heatmap…").waitFor();
      expect(await figure.locator('img').count()).toBe(0);
      await screenshot(page, 'entrance-heatmap-drawing-desktop');
      const reads = callsOf('EntranceHeatmaps').length;
      state.heatmaps = [{ ...state.heatmaps[0], imageURL: gateway.mediaUrl('heat-today.png') }];
      const image = figure.locator('img[alt^="Heatmap of bee movement"]');
      await image.waitFor({ timeout: 8_000 });
      await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(320);
      expect(callsOf('EntranceHeatmaps').length).toBe(reads + 1);
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('plays a stored clip, uploads one with progress, and follows it through processing', async () => {
    const created = new Date(Date.now() - 3600_000).toISOString();
    state.videos = [
      { id: 'v1', boxId: state.boxId, state: 'READY', progress: 100, failureReason: null, startTime: created, endTime: null, durationSeconds: 8, width: 320, height: 240, sizeBytes: 161_000, posterURL: gateway.mediaUrl('poster.jpg'), playlistURL: gateway.signedClipUrl('v1', 'index.m3u8', Date.now() + 10_000), createdAt: created },
      { id: 'v0', boxId: state.boxId, state: 'FAILED', progress: 0, failureReason: 'the file is not a video ffmpeg can read', startTime: new Date(Date.now() - 7200_000).toISOString(), endTime: null, durationSeconds: null, width: null, height: null, sizeBytes: 1200, posterURL: null, playlistURL: null, createdAt: new Date(Date.now() - 7200_000).toISOString() },
    ];
    const { context, page, problems } = await openEntrance();
    try {
      const clips = page.getByRole('list', { name: 'Clips, newest first' });
      await clips.getByText('Ready').waitFor();
      expect(await clips.getByRole('listitem').nth(1).innerText()).toMatch(/Failed[\s\S]*the file is not a video ffmpeg can read/);
      // Only the ready clip plays; every clip, the failed one too, can be deleted.
      expect(await clips.getByRole('button', { name: /^Play/ }).count()).toBe(1);
      expect(await clips.getByRole('button', { name: /^Delete Clip from/ }).count()).toBe(2);

      await clips.getByRole('button', { name: /^Play Clip from/ }).click();
      const video = page.locator('.clip-player video');
      await waitForPlayback(video, 1);
      // The playing clip's button was a pressed toggle, "Playing", that did nothing when pressed again: it stops.
      const stop = clips.getByRole('button', { name: /^Stop Clip from/ });
      expect(await stop.getAttribute('aria-pressed')).toBeNull();

      // The links are re-read before they expire, and the player goes on under the new ones: a page left open used
      // to keep its first links, and a long clip stalled on 403s once they expired.
      const reads = callsOf('GateVideos').length;
      const renewedAt = Date.now() + 3600_000;
      state.videos[0] = { ...state.videos[0]!, playlistURL: gateway.signedClipUrl('v1', 'index.m3u8', renewedAt) };
      await expect.poll(() => callsOf('GateVideos').length, { timeout: 15_000 }).toBeGreaterThan(reads);
      expect(await video.evaluate((element: HTMLVideoElement) => element.error)).toBeNull();
      expect(await page.getByRole('alert').count()).toBe(0);

      // Upload: the server receives a GraphQL multipart request and lists the clip as processing.
      const file = path.join(mediaDir, 'upload.mp4');
      const bytes = readFileSync(file);
      state.onUpload = () => {
        state.videos.unshift({ id: 'v2', boxId: state.boxId, state: 'PROCESSING', progress: 40, failureReason: null, startTime: new Date().toISOString(), endTime: null, durationSeconds: null, width: null, height: null, sizeBytes: bytes.length, posterURL: null, playlistURL: null, createdAt: new Date().toISOString() });
      };
      await page.getByLabel('Video file').setInputFiles(file);
      await page.getByLabel('Recorded at (optional)').fill('2026-05-10T06:30');
      await page.getByRole('button', { name: 'Upload', exact: true }).click();
      await page.getByText(/^Uploaded upload\.mp4\. The clip is being processed/).waitFor();
      const upload = state.uploads.at(-1)!;
      expect(upload.operations.operationName).toBe('UploadGateVideo');
      expect(upload.operations.query).toContain('uploadGateVideo(file: $file, boxId: $boxId, startTime: $startTime)');
      expect(upload.operations.variables).toEqual({ file: null, boxId: state.boxId, startTime: '2026-05-10T06:30:00.000Z' });
      expect(upload.map).toEqual({ 0: ['variables.file'] });
      expect(upload.files).toEqual([{ field: '0', filename: 'upload.mp4', contentType: 'video/mp4', size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') }]);

      const processing = clips.getByRole('listitem').first();
      await processing.getByText('Processing').waitFor();
      expect(await processing.getByRole('progressbar').getAttribute('value')).toBe('40');
      // While a clip is processing the list re-reads itself.
      state.videos[0] = { ...state.videos[0], state: 'READY', progress: 100, durationSeconds: 3, playlistURL: gateway.mediaUrl('clip/index.m3u8') };
      await processing.getByText('Ready').waitFor({ timeout: 10_000 });
      await stop.click();
      await expect.poll(() => video.count()).toBe(0);
      expect(await clips.getByRole('button', { name: /^Play Clip from/ }).count()).toBe(2);
      await screenshot(page, 'entrance-media-desktop');
      await page.setViewportSize(PHONE);
      expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
      await screenshot(page, 'entrance-media-phone');

      expect(problems.list).toEqual([]);
    } finally {
      state.onUpload = undefined;
      await context.close();
    }
  }, 60_000);

  // A box with more than 50 clips showed the newest 50 and no way to the others.
  it('shows older clips on request, page by page', async () => {
    const at = (k: number) => new Date(Date.UTC(2026, 4, 1, 10, 0) - k * 60_000).toISOString();
    state.videos = Array.from({ length: 53 }, (_, k) => ({
      id: `c${k}`, boxId: state.boxId, state: 'READY', progress: 100, failureReason: null, startTime: at(Math.min(k, 51)), endTime: null, durationSeconds: 1, width: 320, height: 240, sizeBytes: 1000, posterURL: null, playlistURL: gateway.mediaUrl('clip/index.m3u8'), createdAt: at(k),
    }));
    const { context, page, problems } = await openEntrance();
    try {
      const clips = page.getByRole('list', { name: 'Clips, newest first' }).getByRole('listitem');
      await expect.poll(() => clips.count()).toBe(50);
      await page.getByRole('button', { name: 'Show older clips' }).click();
      // The last two start at the same minute: paging by the last clip's id, not its time, keeps both.
      await expect.poll(() => clips.count()).toBe(53);
      expect(await page.getByRole('button', { name: 'Show older clips' }).count()).toBe(0);
      expect(callsOf('GateVideos').at(-1)?.variables).toMatchObject({ limit: 50, after: 'c49' });
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });

  // A first read of the clips that failed said "No clips yet", as if the box had none, and offered no way to read them again.
  it('shows why the clips could not be read, with a way to try again, and "No clips yet" only for a box without clips', async () => {
    state.videos = [];
    const { context, page, problems } = await openEntrance(DESKTOP, { allowed: [/net::ERR_FAILED/] });
    try {
      const section = page.getByRole('region', { name: 'Recorded clips' });
      const noClips = section.getByText(/^No clips yet/);
      await noClips.waitFor();

      let failure: 'network' | 'graphql' | undefined = 'network';
      await page.route('**/graphql', async (route) => {
        const body = route.request().postDataJSON() as { operationName?: string } | null;
        if (body?.operationName !== 'GateVideos' || !failure) return route.fallback();
        if (failure === 'network') return route.abort('failed');
        return route.fulfill({ json: { data: null, errors: [{ message: 'the video store did not answer', path: ['gateVideos'] }] } });
      });
      await page.reload();
      const alert = section.getByRole('alert');
      await alert.getByText(/^Cannot reach the server/).waitFor();
      expect(await noClips.count()).toBe(0);
      expect(await alert.innerText()).toMatch(/^Could not load the clips\.\s+Cannot reach the server\. Check your connection and try again\.\s+Try again$/);
      expect(await section.getByRole('list', { name: 'Clips, newest first' }).count()).toBe(0);

      failure = 'graphql';
      await alert.getByRole('button', { name: 'Try again' }).click();
      await expect.poll(() => alert.innerText()).toMatch(/the video store did not answer/);
      expect(await noClips.count()).toBe(0);
      await screenshot(page, 'entrance-clips-error-desktop');

      failure = undefined;
      state.videos = [
        { id: 'e1', boxId: state.boxId, state: 'READY', progress: 100, failureReason: null, startTime: new Date().toISOString(), endTime: null, durationSeconds: 8, width: 320, height: 240, sizeBytes: 161_000, posterURL: null, playlistURL: gateway.mediaUrl('clip/index.m3u8'), createdAt: new Date().toISOString() },
      ];
      await alert.getByRole('button', { name: 'Try again' }).click();
      await section.getByRole('list', { name: 'Clips, newest first' }).getByRole('listitem').waitFor();
      expect(await section.getByRole('alert').count()).toBe(0);
      expect(await noClips.count()).toBe(0);
      expect(problems.list).toEqual([]);
    } finally {
      state.videos = [];
      await context.close();
    }
  });

  it('runs the live view: camera offline, player only once the playlist exists, failure message, stop, with the focus kept on its buttons', async () => {
    gateway.setLive(null);
    state.devices = { [state.boxId]: { online: false, lastSeenAt: new Date(Date.now() - 300_000).toISOString() } };
    const { context, page, problems } = await openEntrance(DESKTOP, { allowed: [/status of 404/] });
    try {
      const status = page.locator('.live-card [role="status"]');
      await status.getByText('No live stream is running.').waitFor();
      const subscribedBefore = state.subscribed;
      const readsBeforeStart = callsOf('LiveSession').length;
      await page.getByRole('button', { name: 'Start live view' }).click();
      await status.getByText('The entrance camera is offline.').waitFor();
      // The pressed Start gives way to Stop, which takes the focus (it fell to the page before).
      await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Stop');
      expect(await status.innerText()).toMatch(/starts as soon as the camera reconnects/);
      expect(callsOf('StartLive').at(-1)?.variables).toEqual({ boxId: state.boxId, qualityProfile: null, recordingMode: null });
      // From here on the status is pushed over the subscription: no re-reads, and changes show at once.
      await expect.poll(() => state.subscribed).toBe(subscribedBefore + 1);
      // One read since the start: when the subscription opened, to catch up with what came before it.
      await expect.poll(() => callsOf('LiveSession').length).toBe(readsBeforeStart + 1);
      const reads = callsOf('LiveSession').length;

      // ACTIVE, but the playlist is not there yet: no player.
      const playlist = path.join(mediaDir, 'live', 'index.m3u8');
      gateway.setLive({ ...state.live!, status: 'ACTIVE', playbackUrl: gateway.mediaUrl('live/index.m3u8') });
      await status.getByText('Live', { exact: true }).waitFor({ timeout: 3000 });
      await page.getByText('Waiting for the first video segment…').waitFor();
      await page.waitForTimeout(1500);
      expect(await page.locator('.live-card video').count()).toBe(0);
      copyFileSync(path.join(mediaDir, 'live-playlist.m3u8'), playlist);
      const video = page.locator('.live-card video');
      await video.waitFor({ timeout: 10_000 });
      await waitForPlayback(video, 0.5);
      expect(await video.getAttribute('aria-label')).toBe(`Live video of box ${state.boxId}`);
      // The player showed a seek bar of "0:01 / 0:02", as if the live stream were a two-second clip.
      expect(await video.evaluate((element: HTMLVideoElement) => element.duration)).toBe(Infinity);
      await screenshot(page, 'entrance-live-desktop');

      // Every read re-signs the playback URL. A renewed one is not a new stream: the same player plays on and
      // fetches the playlist from the new URL, so a long view outlives the first URL without restarting.
      // (A restarted player would be a new element or a new MediaSource, whose blob: URL differs.)
      await video.evaluate((element: HTMLVideoElement) => (element.dataset.player = 'first'));
      const mediaSource = await video.evaluate((element: HTMLVideoElement) => element.src);
      const renewed = `${gateway.mediaUrl('live/index.m3u8')}?grant=renewed`;
      const renewedPlaylistLoad = page.waitForRequest((request) => request.url() === renewed, { timeout: 10_000 });
      gateway.setLive({ ...state.live!, playbackUrl: renewed });
      await renewedPlaylistLoad;
      await page.waitForTimeout(500);
      expect(await video.getAttribute('data-player')).toBe('first');
      expect(await video.evaluate((element: HTMLVideoElement) => element.src)).toBe(mediaSource);
      expect(mediaSource).toMatch(/^blob:/);

      // A failure reported by the device shows the server's code and message, and Start is offered again.
      gateway.setLive({ ...state.live!, status: 'FAILED', lastErrorCode: 'CAMERA_BUSY', lastErrorMessage: 'the camera is used by another program' });
      await status.getByText('The live stream failed.').waitFor({ timeout: 3000 });
      expect(await status.innerText()).toContain('the camera is used by another program (CAMERA_BUSY)');
      expect(await page.locator('.live-card video').count()).toBe(0);
      expect(callsOf('LiveSession').length).toBe(reads);

      await page.getByRole('button', { name: 'Start again' }).click();
      await status.getByText('The entrance camera is offline.').waitFor();
      const sessionId = state.live!.id;
      await page.getByRole('button', { name: 'Stop' }).click();
      await status.getByText('The live stream has ended.').waitFor();
      expect(callsOf('StopLive').at(-1)?.variables).toEqual({ sessionId });
      expect(await page.getByRole('button', { name: 'Start again' }).count()).toBe(1);

      // Stop pressed on a camera that takes a moment to stop sent the focus to the page, and "Start again" came without it.
      const focused = () => page.evaluate(() => document.activeElement?.textContent);
      state.stopping = true;
      await page.getByRole('button', { name: 'Start again' }).click();
      await expect.poll(focused).toBe('Stop');
      await page.keyboard.press('Enter');
      await status.getByText('Stopping the stream…').waitFor();
      await expect.poll(focused).toBe('Stopping…');
      gateway.setLive({ ...state.live!, status: 'STOPPED' });
      await status.getByText('The live stream has stopped.').waitFor();
      await expect.poll(focused).toBe('Start again');
      expect(problems.list).toEqual([]);
    } finally {
      state.stopping = false;
      rmSync(path.join(mediaDir, 'live', 'index.m3u8'), { force: true });
      await context.close();
    }
  });

  it('without a subscription, re-reads a running session every 5 s; keeps it alive every 30 s; stops both once it is over', async () => {
    gateway.setLive(null);
    state.subscriptions = false;
    const { context, page } = await openEntrance(DESKTOP, { clock: true });
    try {
      await page.getByRole('button', { name: 'Start live view' }).click();
      await page.locator('.live-card [role="status"]').getByText('The entrance camera is offline.').waitFor();
      const reads = () => callsOf('LiveSession').length;
      const keepAlives = () => callsOf('KeepLiveAlive').length;
      const readsBefore = reads();
      await page.clock.runFor(5_100);
      await expect.poll(reads).toBe(readsBefore + 1);
      expect(keepAlives()).toBe(0);
      await page.clock.runFor(25_000);
      await expect.poll(keepAlives).toBe(1);
      expect(callsOf('KeepLiveAlive')[0]?.variables).toEqual({ sessionId: state.live!.id });
      await page.clock.runFor(30_000);
      await expect.poll(keepAlives).toBe(2);

      state.live = { ...state.live!, status: 'EXPIRED' };
      await page.clock.runFor(5_100);
      await page.locator('.live-card [role="status"]').getByText(/ended because nobody was watching/).waitFor();
      const [readsAfter, keepAlivesAfter] = [reads(), keepAlives()];
      await page.clock.runFor(65_000);
      await page.waitForTimeout(300);
      expect([reads(), keepAlives()]).toEqual([readsAfter, keepAlivesAfter]);
    } finally {
      state.subscriptions = true;
      gateway.setLive(null);
      await context.close();
    }
  });

  it('shows on the overview whether each entrance camera is online, or counts without a live video link', async () => {
    state.devices = { [state.boxId]: { online: true, lastSeenAt: new Date().toISOString() } };
    const { context, page, problems } = await openEntrance();
    try {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Apiary' }).click();
      const row = page.getByRole('listitem').filter({ has: page.getByRole('link', { name: `Box ${state.boxId}` }) });
      await row.getByText('Camera online').waitFor();
      state.devices = { [state.boxId]: { online: false, lastSeenAt: new Date(Date.now() - 600_000).toISOString() } };
      await page.reload();
      await row.getByText('Camera offline · seen 10 minutes ago').waitFor();
      // Before, a box with today's counts from an agent without live video read "Camera not seen yet".
      state.devices = {};
      await page.reload();
      await row.getByText('No live video link').waitFor();
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });

  // "Today" was the UTC day: in Los Angeles the counts started again at 4 or 5 in the afternoon.
  it('asks for today\'s counts in the browser\'s time zone, on the box page and the overview', async () => {
    const { context, page, problems } = await openEntrance(DESKTOP, { timezoneId: 'America/Los_Angeles' });
    try {
      await page.getByText('In today').waitFor();
      expect(callsOf('EntranceBox').at(-1)?.variables).toEqual({ boxId: state.boxId, timeZone: 'America/Los_Angeles' });
      // Clip times are local and heatmaps UTC days, and neither said so.
      await page.getByRole('region', { name: 'Recorded clips' }).getByText('Times are America/Los_Angeles time.').waitFor();
      const heatmaps = page.getByRole('region', { name: 'Daily heatmaps' });
      expect(await heatmaps.innerText()).toContain('one picture per UTC day');
      expect(await heatmaps.getByLabel('Day (UTC)', { exact: true }).count()).toBe(1);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Apiary' }).click();
      await page.getByRole('link', { name: `Box ${state.boxId}` }).waitFor();
      expect(callsOf('Apiary').at(-1)?.variables).toEqual({ timeZone: 'America/Los_Angeles' });
      expect(problems.list).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
