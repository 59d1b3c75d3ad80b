import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildTestApp, createUser, graphql, type TestApp } from './helper.ts';

let t: TestApp;
let token: string;
const T0 = Date.UTC(2026, 4, 1) / 1000; // 2026-05-01T00:00:00Z

beforeAll(async () => {
  t = await buildTestApp();
  const user = await createUser(t.app);
  token = user.token;
  const metrics = Array.from({ length: 120 }, (_, i) => ({ hiveId: 'h', fields: { temperatureCelsius: 30 + (i % 2), weightKg: 40 + i / 100 }, timestamp: T0 + i * 60 }));
  const movement = Array.from({ length: 60 }, (_, i) => ({ hiveId: 'h', boxId: 'b', beesIn: 2, beesOut: 1, avgSpeed: 4, detectedBees: 5, timestamp: T0 + (i + 1) * 60 }));
  await t.app.inject({ method: 'POST', url: '/iot/v1/metrics', headers: user.auth, payload: metrics });
  await t.app.inject({ method: 'POST', url: '/entrance/v1/movement', headers: user.auth, payload: movement });
  // The day after, to check that daily totals stop at midnight UTC.
  await t.app.inject({ method: 'POST', url: '/entrance/v1/movement', headers: user.auth, payload: { hiveId: 'h', boxId: 'b', beesIn: 100, beesOut: 0, timestamp: T0 + 86_400 } });
});
afterAll(() => t.close());

describe('telemetry reads', () => {
  it('averages metrics per bucket', async () => {
    const result = await graphql(t.app, token, `{ hiveMetrics(hiveId: "h", from: "2026-05-01T00:00:00Z", to: "2026-05-01T02:00:00Z", bucketSeconds: 3600) { time temperatureCelsius weightKg samples } }`);
    expect(result.data?.hiveMetrics).toEqual([
      { time: '2026-05-01T00:00:00.000Z', temperatureCelsius: 30.5, weightKg: expect.closeTo(40.295, 6), samples: 60 },
      { time: '2026-05-01T01:00:00.000Z', temperatureCelsius: 30.5, weightKg: expect.closeTo(40.895, 6), samples: 60 },
    ]);
  });

  it('sums movement per bucket and reads zone-less times as UTC', async () => {
    const result = await graphql(t.app, token, `{ entranceMovement(boxId: "b", from: "2026-05-01T00:00:00", to: "2026-05-01T00:30:00", bucketSeconds: 600) { time beesIn beesOut netFlow avgSpeed detectedBees samples } }`);
    const buckets = result.data?.entranceMovement as { beesIn: number; samples: number }[];
    expect(buckets).toHaveLength(3);
    expect(buckets[0]).toEqual({ time: '2026-05-01T00:00:00.000Z', beesIn: 18, beesOut: 9, netFlow: 9, avgSpeed: 4, detectedBees: 45, samples: 9 });
    expect(buckets[1]).toMatchObject({ beesIn: 20, samples: 10 });
  });

  // Daily bars were UTC days next to a "today" in the user's zone, and Kolkata's hourly buckets were labelled at :30.
  it('lays buckets on the wall clock of the time zone asked for', async () => {
    const series = (field: string, id: string, bucketSeconds: number, timeZone?: string) =>
      graphql(t.app, token, `{ ${field}(${field === 'hiveMetrics' ? 'hiveId' : 'boxId'}: "${id}", from: "2026-04-30T00:00:00Z", to: "2026-05-03T00:00:00Z", bucketSeconds: ${bucketSeconds}${timeZone ? `, timeZone: "${timeZone}"` : ''}) { time samples } }`);
    expect((await series('entranceMovement', 'b', 86_400)).data?.entranceMovement).toEqual([
      { time: '2026-05-01T00:00:00.000Z', samples: 60 },
      { time: '2026-05-02T00:00:00.000Z', samples: 1 },
    ]);
    // In Los Angeles (PDT, UTC−7) the first hour of May 1 UTC is the evening of April 30.
    expect((await series('entranceMovement', 'b', 86_400, 'America/Los_Angeles')).data?.entranceMovement).toEqual([
      { time: '2026-04-30T07:00:00.000Z', samples: 60 },
      { time: '2026-05-01T07:00:00.000Z', samples: 1 },
    ]);
    // Kolkata is UTC+5:30: its hours start at :30 UTC.
    expect((await series('entranceMovement', 'b', 3600, 'Asia/Kolkata')).data?.entranceMovement).toEqual([
      { time: '2026-04-30T23:30:00.000Z', samples: 29 },
      { time: '2026-05-01T00:30:00.000Z', samples: 31 },
      { time: '2026-05-01T23:30:00.000Z', samples: 1 },
    ]);
    expect((await series('hiveMetrics', 'h', 86_400, 'Europe/Vienna')).data?.hiveMetrics).toEqual([{ time: '2026-04-30T22:00:00.000Z', samples: 120 }]);
    expect((await series('hiveMetrics', 'h', 3600, 'Mars/Olympus')).errors?.[0]?.message).toBe('timeZone must be an IANA time zone such as "Europe/Vienna", got "Mars/Olympus"');
  });

  // Nothing said what a bucket's fields were (a sum? a mean?), nor that firstSeenAt is not the earliest measurement.
  it('describes every movement bucket field and what firstSeenAt means', async () => {
    const fieldsOf = async (type: string) => {
      const result = await graphql(t.app, token, `{ __type(name: "${type}") { fields { name description } } }`);
      return (result.data?.__type as { fields: { name: string; description: string | null }[] }).fields;
    };
    for (const field of await fieldsOf('MovementBucket')) expect(field.description, field.name).toMatch(/\w{3,}.*\w{3,}/);
    for (const type of ['Hive', 'Box']) {
      expect((await fieldsOf(type)).find((field) => field.name === 'firstSeenAt')?.description).toMatch(/^When the service first heard of this .*Not the time of\sits earliest measurement/s);
    }
  });

  it('gives daily totals per box for a UTC date', async () => {
    const result = await graphql(t.app, token, `{ entranceTotals(date: "2026-05-01") { boxId hiveId date beesIn beesOut netFlow lastSampleAt } }`);
    expect(result.data?.entranceTotals).toEqual([
      { boxId: 'b', hiveId: 'h', date: '2026-05-01', beesIn: 120, beesOut: 60, netFlow: 60, lastSampleAt: '2026-05-01T01:00:00.000Z' },
    ]);
    const nextDay = await graphql(t.app, token, `{ entranceTotals(boxIds: ["b"], date: "2026-05-02") { beesIn } }`);
    expect(nextDay.data?.entranceTotals).toEqual([{ beesIn: 100 }]);
  });

  it('takes the day in the time zone asked for, so that "today" ends at the user\'s midnight', async () => {
    // The first hour of May 1 in UTC is still April 30 in Los Angeles, and already the afternoon of May 1 in Vienna.
    const totals = (date: string, timeZone: string) => graphql(t.app, token, `{ entranceTotals(boxIds: ["b"], date: "${date}", timeZone: "${timeZone}") { date beesIn } }`);
    expect((await totals('2026-04-30', 'America/Los_Angeles')).data?.entranceTotals).toEqual([{ date: '2026-04-30', beesIn: 120 }]);
    expect((await totals('2026-05-01', 'America/Los_Angeles')).data?.entranceTotals).toEqual([{ date: '2026-05-01', beesIn: 100 }]);
    expect((await totals('2026-05-01', 'Europe/Vienna')).data?.entranceTotals).toEqual([{ date: '2026-05-01', beesIn: 120 }]);
    expect((await totals('2026-05-02', 'Europe/Vienna')).data?.entranceTotals).toEqual([{ date: '2026-05-02', beesIn: 100 }]);

    const today = (timeZone: string) => graphql(t.app, token, `{ boxes(hiveId: "h") { today(timeZone: "${timeZone}") { date } } }`);
    for (const timeZone of ['Pacific/Kiritimati', 'Pacific/Pago_Pago']) {
      const local = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
      expect((await today(timeZone)).data?.boxes).toEqual([{ today: { date: local } }]);
    }
  });

  // The page of a box id the user had nothing of (a typo, another user's box) offered a live view that blamed the camera.
  it('reads one box the user has anything of, and nothing for any other id', async () => {
    const read = (id: string, as = token) => graphql(t.app, as, `{ box(id: "${id}") { id hiveId today(timeZone: "UTC") { date beesIn } } }`);
    expect((await read('b')).data?.box).toEqual({ id: 'b', hiveId: 'h', today: { date: new Date().toISOString().slice(0, 10), beesIn: 0 } });
    expect((await read('no-such-box')).data).toEqual({ box: null });
    // Known only by the token made for its camera, before the camera has sent anything: a box with nothing counted.
    const { token: cameraToken } = await graphql(t.app, token, `mutation { createApiToken(name: "new camera", scopes: ["device"], boxIds: ["new-box"]) { token } }`).then(
      (r) => r.data?.createApiToken as { token: string },
    );
    expect(cameraToken).toBeTruthy();
    expect((await read('new-box')).data?.box).toEqual({ id: 'new-box', hiveId: null, today: { date: expect.any(String), beesIn: 0 } });
    // Another user has none of these.
    const other = await createUser(t.app);
    expect((await read('b', other.token)).data).toEqual({ box: null });
    expect((await read('new-box', other.token)).data).toEqual({ box: null });
  });

  // A camera set up and polling, but not counting yet, was on no list: the apiary had nothing to lead to its page.
  it('lists the boxes not counting yet that the user has a camera, clips or a live token of, until they count', async () => {
    const user = await createUser(t.app);
    const list = (as = user.token) => graphql(t.app, as, `{ boxesAwaitingCounts { id hiveId device { online } today(timeZone: "UTC") { beesIn } } }`).then((r) => r.data?.boxesAwaitingCounts as { id: string }[]);
    expect(await list()).toEqual([]);
    const status = await t.app.inject({ method: 'POST', url: '/api/entrance-live/device/status', headers: user.auth, payload: { boxId: 'polling-camera', cameraStatus: {}, publisherState: {} } });
    expect(status.statusCode).toBe(200);
    const tokenFor = (boxId: string) =>
      graphql(t.app, user.token, `mutation { createApiToken(name: "camera ${boxId}", scopes: ["device", "read"], boxIds: ["${boxId}"]) { token apiToken { id } } }`).then((r) => r.data?.createApiToken as { token: string; apiToken: { id: string } });
    const limited = await tokenFor('token-only');
    const revoked = await tokenFor('revoked-token');
    await graphql(t.app, user.token, `mutation { revokeApiToken(id: "${revoked.apiToken.id}") }`);
    // An expired token's box is none of the account's either (box() took it for one, so a live start waited on it).
    await t.app.ctx.tokens.issue({ userId: user.user.id, name: 'old camera', scopes: ['device'], boxIds: ['expired-token'], expiresAt: new Date(Date.now() - 60_000) });
    expect((await graphql(t.app, user.token, `{ box(id: "expired-token") { id } }`)).data).toEqual({ box: null });
    const heatmap = await t.app.inject({
      method: 'POST',
      url: '/api/entrance-heatmaps/trajectories',
      headers: user.auth,
      payload: { boxId: 'tracks-only', timestamp: '2026-05-01T10:15:00', frameDimensions: { width: 640, height: 480 }, trackHistory: { '1': [[1, 1], [13, 2]] } },
    });
    expect(heatmap.statusCode).toBe(200);
    // A clip's row as an upload leaves it (the upload itself is video.test.ts's).
    await t.app.ctx.db.query(`INSERT INTO gate_videos (owner_id, box_id, start_time, size_bytes, original_key) VALUES ($1, 'clips-only', now(), 1, 'clip')`, [user.user.id]);
    expect(await list()).toEqual([
      { id: 'clips-only', hiveId: null, device: null, today: { beesIn: 0 } },
      { id: 'polling-camera', hiveId: null, device: { online: true }, today: { beesIn: 0 } },
      { id: 'token-only', hiveId: null, device: null, today: { beesIn: 0 } },
      { id: 'tracks-only', hiveId: null, device: null, today: { beesIn: 0 } },
    ]);
    // A token limited to one box sees that box alone.
    expect((await list(limited.token)).map((box) => box.id)).toEqual(['token-only']);
    // Once it counts, a box is listed by boxes (and its hive) instead.
    await t.app.inject({ method: 'POST', url: '/entrance/v1/movement', headers: user.auth, payload: { hiveId: 'h2', boxId: 'polling-camera', beesIn: 1, beesOut: 0 } });
    expect((await list()).map((box) => box.id)).toEqual(['clips-only', 'token-only', 'tracks-only']);
    // Another user has none of them.
    expect(await list((await createUser(t.app)).token)).toEqual([]);
  });

  it('lists hives with their boxes', async () => {
    const result = await graphql(t.app, token, `{ hive(id: "h") { id boxes { id hiveId } lastReading { temperatureCelsius } } boxes(hiveId: "h") { id } }`);
    expect(result.data).toEqual({ hive: { id: 'h', boxes: [{ id: 'b', hiveId: 'h' }], lastReading: { temperatureCelsius: 31 } }, boxes: [{ id: 'b' }] });
  });

  it('gives each hive of a list its own boxes, newest reading and totals, in any mix of time zones', async () => {
    const other = await createUser(t.app);
    const day = Math.floor(Date.now() / 1000) - 60;
    const movement = [
      { hiveId: 'h1', boxId: 'b1', beesIn: 5, beesOut: 1, timestamp: day },
      { hiveId: 'h1', boxId: 'b2', beesIn: 7, beesOut: 2, timestamp: day },
      { hiveId: 'h2', boxId: 'b3', beesIn: 9, beesOut: 3, timestamp: day },
    ];
    await t.app.inject({ method: 'POST', url: '/entrance/v1/movement', headers: other.auth, payload: movement });
    const readings = [{ hiveId: 'h1', fields: { weightKg: 41 }, timestamp: day }, { hiveId: 'h2', fields: { weightKg: 52 }, timestamp: day }];
    await t.app.inject({ method: 'POST', url: '/iot/v1/metrics', headers: other.auth, payload: readings });
    const result = await graphql(t.app, other.token, `{ hives { id lastReading { weightKg } boxes { id utc: today(timeZone: "UTC") { beesIn } kiritimati: today(timeZone: "Pacific/Kiritimati") { date beesIn } } } }`);
    const dateIn = (timeZone: string, at: Date) => new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
    // A minute ago is today in both zones, except in the minute after either zone's midnight.
    const countedToday = (timeZone: string, beesIn: number) => (dateIn(timeZone, new Date(day * 1000)) === dateIn(timeZone, new Date()) ? beesIn : 0);
    const box = (id: string, beesIn: number) => ({
      id,
      utc: { beesIn: countedToday('UTC', beesIn) },
      kiritimati: { date: dateIn('Pacific/Kiritimati', new Date()), beesIn: countedToday('Pacific/Kiritimati', beesIn) },
    });
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      hives: [
        { id: 'h1', lastReading: { weightKg: 41 }, boxes: [box('b1', 5), box('b2', 7)] },
        { id: 'h2', lastReading: { weightKg: 52 }, boxes: [box('b3', 9)] },
      ],
    });
  });

  // One request with hundreds of aliases kept the server busy for minutes, and every other request waited.
  it('refuses an operation that selects too many fields, before it runs', async () => {
    const aliases = Array.from({ length: 300 }, (_, i) => `a${i}: hives { id boxes { id today { beesIn } } }`).join(' ');
    const response = await t.app.inject({ method: 'POST', url: '/graphql', headers: { authorization: `Bearer ${token}` }, payload: { query: `query Greedy { ${aliases} }` } });
    expect(response.statusCode).toBe(400);
    expect(response.json().errors[0]).toMatchObject({
      message: 'operation "Greedy" selects more than 400 fields (aliases and fragments counted where they are used): split it into several requests',
      extensions: { code: 'QUERY_TOO_LARGE' },
    });
  });

  it('explains bad ranges, buckets and dates', async () => {
    const reversed = await graphql(t.app, token, `{ hiveMetrics(hiveId: "h", from: "2026-05-02T00:00:00Z", to: "2026-05-01T00:00:00Z") { time } }`);
    expect(reversed.errors?.[0]).toMatchObject({ message: '"to" must be after "from"', extensions: { code: 'BAD_USER_INPUT' } });
    const tiny = await graphql(t.app, token, `{ hiveMetrics(hiveId: "h", from: "2026-01-01T00:00:00Z", to: "2026-05-01T00:00:00Z", bucketSeconds: 60) { time } }`);
    expect(tiny.errors?.[0]?.message).toMatch(/more than 10000 points/);
    const badDate = await graphql(t.app, token, `{ hiveMetrics(hiveId: "h", from: "yesterday", to: "2026-05-01T00:00:00Z") { time } }`);
    expect(badDate.errors?.[0]).toMatchObject({ message: expect.stringMatching(/ISO-8601/), extensions: { code: 'BAD_USER_INPUT' } });
    // Passed as a variable, the same mistake came back with no code at all.
    const byVariable = await graphql(t.app, token, `query ($from: DateTime!) { hiveMetrics(hiveId: "h", from: $from, to: "2026-05-01T00:00:00Z") { time } }`, { from: '2026-02-30T00:00:00Z' });
    expect(byVariable.errors?.[0]).toMatchObject({ message: expect.stringContaining('"2026-02-30T00:00:00Z" is not a valid date'), extensions: { code: 'BAD_USER_INPUT' } });
    const badDay = await graphql(t.app, token, `{ entranceTotals(date: "2026-02-30") { boxId } }`);
    expect(badDay.errors?.[0]?.message).toBe('date must be a calendar date YYYY-MM-DD');
    const badZone = await graphql(t.app, token, `{ entranceTotals(timeZone: "Mars/Olympus") { boxId } }`);
    expect(badZone.errors?.[0]).toMatchObject({ message: 'timeZone must be an IANA time zone such as "Europe/Vienna", got "Mars/Olympus"', extensions: { code: 'BAD_USER_INPUT' } });
    const badTodayZone = await graphql(t.app, token, `{ boxes { today(timeZone: "") { beesIn } } }`);
    expect(badTodayZone.errors?.[0]?.message).toMatch(/^timeZone must be an IANA time zone/);
  });
});

describe('buckets where the clocks change', () => {
  let dst: Awaited<ReturnType<typeof createUser>>;
  /** One bee in, and a temperature counting up from 0, every 15 minutes from `first` to `last`. */
  const everyQuarter = (box: string, first: string, last: string) => {
    const times: number[] = [];
    for (let at = Date.parse(first) / 1000; at <= Date.parse(last) / 1000; at += 900) times.push(at);
    return {
      movement: times.map((timestamp) => ({ hiveId: box, boxId: box, beesIn: 1, beesOut: 0, timestamp })),
      metrics: times.map((timestamp, i) => ({ hiveId: box, fields: { temperatureCelsius: i }, timestamp })),
    };
  };
  const movement = async (box: string, from: string, to: string, bucketSeconds: number, timeZone: string) => {
    const result = await graphql(t.app, dst.token, `{ entranceMovement(boxId: "${box}", from: "${from}", to: "${to}", bucketSeconds: ${bucketSeconds}, timeZone: "${timeZone}") { time beesIn } }`);
    expect(result.errors).toBeUndefined();
    return (result.data?.entranceMovement as { time: string; beesIn: number }[]).map(({ time, beesIn }) => [time.replace(':00.000Z', 'Z'), beesIn]);
  };

  beforeAll(async () => {
    dst = await createUser(t.app);
    for (const [box, first, last] of [
      ['berlin-autumn', '2026-10-24T23:30:00Z', '2026-10-25T02:15:00Z'],
      ['berlin-spring', '2026-03-28T23:30:00Z', '2026-03-29T02:15:00Z'],
      ['lord-howe', '2026-04-04T13:30:00Z', '2026-04-04T16:15:00Z'],
      ['santiago', '2026-04-05T01:30:00Z', '2026-04-05T04:15:00Z'],
    ] as const) {
      const { movement: counts, metrics } = everyQuarter(box, first, last);
      expect((await t.app.inject({ method: 'POST', url: '/entrance/v1/movement', headers: dst.auth, payload: counts })).statusCode).toBe(200);
      expect((await t.app.inject({ method: 'POST', url: '/iot/v1/metrics', headers: dst.auth, payload: metrics })).statusCode).toBe(200);
    }
  });

  // Berlin's repeated hour (02:00–03:00 twice) was one bucket at 01:00Z with both hours' bees; 00:00Z was missing.
  it('keeps the two real hours of an autumn change apart, each at the instant it starts', async () => {
    expect(await movement('berlin-autumn', '2026-10-24T23:00:00Z', '2026-10-25T03:00:00Z', 3600, 'Europe/Berlin')).toEqual([
      ['2026-10-24T23:00Z', 2], // 01:00 CEST
      ['2026-10-25T00:00Z', 4], // 02:00 CEST
      ['2026-10-25T01:00Z', 4], // 02:00 CET
      ['2026-10-25T02:00Z', 2], // 03:00 CET
    ]);
    const quarters = await movement('berlin-autumn', '2026-10-24T23:00:00Z', '2026-10-25T03:00:00Z', 900, 'Europe/Berlin');
    expect(quarters.map(([time]) => time)).toEqual(everyQuarter('x', '2026-10-24T23:30:00Z', '2026-10-25T02:15:00Z').movement.map(({ timestamp }) => new Date(timestamp * 1000).toISOString().replace(':00.000Z', 'Z')));
    expect(quarters.every(([, beesIn]) => beesIn === 1)).toBe(true);
    // A three-hour bucket ends at the change, and the day is one bucket of 25 hours.
    expect(await movement('berlin-autumn', '2026-10-24T22:00:00Z', '2026-10-25T05:00:00Z', 3 * 3600, 'Europe/Berlin')).toEqual([
      ['2026-10-24T22:00Z', 6],
      ['2026-10-25T01:00Z', 4],
      ['2026-10-25T02:00Z', 2],
    ]);
    expect(await movement('berlin-autumn', '2026-10-24T22:00:00Z', '2026-10-25T23:00:00Z', 86_400, 'Europe/Berlin')).toEqual([['2026-10-24T22:00Z', 12]]);
    // Weeks ran Thursday to Wednesday (counted from 1 January 1970, a Thursday); this Sunday is in Monday 19 October's.
    expect(await movement('berlin-autumn', '2026-10-20T00:00:00Z', '2026-11-01T00:00:00Z', 7 * 86_400, 'Europe/Berlin')).toEqual([['2026-10-18T22:00Z', 12]]);
    const metrics = await graphql(t.app, dst.token, `{ hiveMetrics(hiveId: "berlin-autumn", from: "2026-10-24T23:00:00Z", to: "2026-10-25T03:00:00Z", bucketSeconds: 3600, timeZone: "Europe/Berlin") { time temperatureCelsius samples } }`);
    expect(metrics.data?.hiveMetrics).toEqual([
      { time: '2026-10-24T23:00:00.000Z', temperatureCelsius: 0.5, samples: 2 },
      { time: '2026-10-25T00:00:00.000Z', temperatureCelsius: 3.5, samples: 4 },
      { time: '2026-10-25T01:00:00.000Z', temperatureCelsius: 7.5, samples: 4 },
      { time: '2026-10-25T02:00:00.000Z', temperatureCelsius: 10.5, samples: 2 },
    ]);
  });

  it('skips the hour the clocks skip in spring, and splits a bucket the change falls inside', async () => {
    expect(await movement('berlin-spring', '2026-03-28T23:00:00Z', '2026-03-29T03:00:00Z', 3600, 'Europe/Berlin')).toEqual([
      ['2026-03-28T23:00Z', 2], // 00:00 CET
      ['2026-03-29T00:00Z', 4], // 01:00 CET
      ['2026-03-29T01:00Z', 4], // 03:00 CEST
      ['2026-03-29T02:00Z', 2], // 04:00 CEST
    ]);
    expect(await movement('berlin-spring', '2026-03-28T23:00:00Z', '2026-03-29T05:00:00Z', 6 * 3600, 'Europe/Berlin')).toEqual([
      ['2026-03-28T23:00Z', 6], // 00:00–02:00 CET
      ['2026-03-29T01:00Z', 6], // 03:00–06:00 CEST
    ]);
  });

  it('follows Lord Howe\'s half-hour change and Santiago\'s change at midnight', async () => {
    // 02:00 (UTC+11) becomes 01:30 (UTC+10:30): the half hour after the change is a bucket of its own.
    expect(await movement('lord-howe', '2026-04-04T13:00:00Z', '2026-04-04T17:00:00Z', 3600, 'Australia/Lord_Howe')).toEqual([
      ['2026-04-04T13:00Z', 2],
      ['2026-04-04T14:00Z', 4],
      ['2026-04-04T15:00Z', 2],
      ['2026-04-04T15:30Z', 4],
    ]);
    // Santiago repeats 23:00 on 4 April: two hours of bees, and a day of 25 hours.
    expect(await movement('santiago', '2026-04-05T01:00:00Z', '2026-04-05T05:00:00Z', 3600, 'America/Santiago')).toEqual([
      ['2026-04-05T01:00Z', 2],
      ['2026-04-05T02:00Z', 4], // 23:00 −03
      ['2026-04-05T03:00Z', 4], // 23:00 −04
      ['2026-04-05T04:00Z', 2],
    ]);
    expect(await movement('santiago', '2026-04-04T03:00:00Z', '2026-04-06T04:00:00Z', 86_400, 'America/Santiago')).toEqual([
      ['2026-04-04T03:00Z', 10],
      ['2026-04-05T04:00Z', 2],
    ]);
  });
});

describe('movement statistics per bucket', () => {
  const JUNE = Date.UTC(2026, 5, 1) / 1000;
  const hour = async (user: { token: string }, boxId: string) => {
    const result = await graphql(t.app, user.token, `{ entranceMovement(boxId: "${boxId}", from: "2026-06-01T00:00:00Z", to: "2026-06-01T01:00:00Z", bucketSeconds: 3600) { beesIn avgSpeed p95Speed detectedBees stationaryBees beeInteractions samples } }`);
    expect(result.errors).toBeUndefined();
    return (result.data?.entranceMovement as Record<string, number | null>[])[0];
  };

  // Speeds were a plain mean of the records' figures (6 and 12.5), as if one bee weighed as much as a hundred.
  it('weights each record\'s speeds by the bees it detected', async () => {
    const user = await createUser(t.app);
    const records = [
      { hiveId: 'h', boxId: 'speeds', beesIn: 1, beesOut: 0, avgSpeed: 2, p95Speed: 5, detectedBees: 100, timestamp: JUNE + 60 },
      { hiveId: 'h', boxId: 'speeds', beesIn: 1, beesOut: 0, avgSpeed: 10, p95Speed: 20, detectedBees: 1, timestamp: JUNE + 120 },
      // Without a speed, a record neither pulls the speeds down nor weighs in them.
      { hiveId: 'h', boxId: 'speeds', beesIn: 1, beesOut: 0, detectedBees: 50, timestamp: JUNE + 180 },
    ];
    expect((await t.app.inject({ method: 'POST', url: '/entrance/v1/movement', headers: user.auth, payload: records })).statusCode).toBe(200);
    const bucket = await hour(user, 'speeds');
    expect(bucket?.avgSpeed).toBeCloseTo(210 / 101, 9);
    expect(bucket?.p95Speed).toBeCloseTo(520 / 101, 9);
    expect(bucket).toMatchObject({ beesIn: 3, detectedBees: 151, samples: 3 });

    // A record without detectedBees weighs as one bee; records without any count are averaged plainly.
    const plain = [
      { hiveId: 'h', boxId: 'plain', beesIn: 1, beesOut: 0, avgSpeed: 3, p95Speed: 6, timestamp: JUNE + 60 },
      { hiveId: 'h', boxId: 'plain', beesIn: 1, beesOut: 0, avgSpeed: 5, p95Speed: 9, timestamp: JUNE + 120 },
    ];
    await t.app.inject({ method: 'POST', url: '/entrance/v1/movement', headers: user.auth, payload: plain });
    expect(await hour(user, 'plain')).toMatchObject({ avgSpeed: 4, p95Speed: 7.5, detectedBees: null, stationaryBees: null });
  });

  // An hour of one-minute records, three bees standing in each, reported 180 bees standing still.
  it('averages the bees standing still, a level, and sums the counts', async () => {
    const user = await createUser(t.app);
    const records = Array.from({ length: 60 }, (_, i) => ({ hiveId: 'h', boxId: 'guards', beesIn: 1, beesOut: 0, stationaryBees: i < 30 ? 2 : 4, beeInteractions: 1, detectedBees: 5, timestamp: JUNE + i * 60 }));
    expect((await t.app.inject({ method: 'POST', url: '/entrance/v1/movement', headers: user.auth, payload: records })).statusCode).toBe(200);
    expect(await hour(user, 'guards')).toEqual({ beesIn: 60, avgSpeed: null, p95Speed: null, detectedBees: 300, stationaryBees: 3, beeInteractions: 60, samples: 60 });
  });

  // Two records at the schema's largest count made the whole series fail with the database's "integer out of range".
  it('sums counts past 32 bits', async () => {
    const user = await createUser(t.app);
    const largest = 2_147_483_647;
    const records = [60, 120].map((second) => ({ hiveId: 'h', boxId: 'huge', beesIn: largest, beesOut: 0, detectedBees: largest, stationaryBees: largest, beeInteractions: largest, timestamp: JUNE + second }));
    expect((await t.app.inject({ method: 'POST', url: '/entrance/v1/movement', headers: user.auth, payload: records })).statusCode).toBe(200);
    expect(await hour(user, 'huge')).toEqual({ beesIn: 2 * largest, avgSpeed: null, p95Speed: null, detectedBees: 2 * largest, stationaryBees: largest, beeInteractions: 2 * largest, samples: 2 });
  });

  // The database's own message ("integer out of range") reached the client and the hive page.
  it('tells the client of a database fault without the database\'s message', async () => {
    const user = await createUser(t.app);
    const databaseError: unknown = await t.app.ctx.db.query('SELECT 2147483647::int + 1').catch((error: unknown) => error);
    expect(databaseError).toMatchObject({ message: 'integer out of range' });
    const failing = vi.spyOn(t.app.ctx.telemetryReads, 'movementSeries').mockRejectedValueOnce(databaseError);
    try {
      const result = await graphql(t.app, user.token, `{ entranceMovement(boxId: "b", from: "2026-06-01T00:00:00Z", to: "2026-06-01T01:00:00Z") { beesIn } }`);
      expect(result.errors).toEqual([expect.objectContaining({ message: expect.stringMatching(/^internal server error/), extensions: { code: 'INTERNAL_SERVER_ERROR' } })]);
      expect(JSON.stringify(result)).not.toContain('out of range');
    } finally {
      failing.mockRestore();
    }
  });
});
