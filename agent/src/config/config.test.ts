import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, FLOAT_MODEL_PATH, frameCountsAt, inferenceThreads, INT8_MODEL_PATH, parseZone, readConfigFile, resolveConfig, SLOT_INT8_MODEL_PATH } from './config.ts';

const minimal = { hiveId: 'hive-1', boxId: 'box-1', source: { url: 'clip.mp4' }, cloud: { url: 'http://127.0.0.1:8600', token: 't' } };

describe('resolveConfig', () => {
  it('fills defaults, derives the zone and the outbox path', () => {
    const config = resolveConfig({ file: minimal, env: {} });
    expect(config.source).toMatchObject({ width: 640, height: 480, fps: 30, pixelFormat: 'rgb24', realtime: false });
    expect(config.counting.zone).toEqual([[0, 240], [640, 240], [640, 480], [0, 480]]);
    expect(config.outbox.path).toMatch(/\.data\/agent\/outbox\.db$/);
    expect(config.detector.kind).toBe('onnx');
    expect(config.detector.model).toBe(INT8_MODEL_PATH);
    expect(config.detector.slot).toEqual({ model: SLOT_INT8_MODEL_PATH, zoom: 2, marginLengths: 1.5, wholeEvery: 1 });
    for (const path of [FLOAT_MODEL_PATH, INT8_MODEL_PATH, SLOT_INT8_MODEL_PATH]) expect(existsSync(path)).toBe(true);
  });

  it('leaves a core to ffmpeg for inference unless told how many threads to use', () => {
    expect([1, 2, 4, 8].map((cores) => inferenceThreads(cores))).toEqual([1, 1, 3, 7]);
    expect(resolveConfig({ file: minimal, env: {} }).detector.threads).toBe(inferenceThreads());
    expect(resolveConfig({ file: { ...minimal, detector: { threads: 4 } }, env: {} }).detector.threads).toBe(4);
    expect(resolveConfig({ file: { ...minimal, detector: { kind: 'motion' } }, env: {} }).detector.threads).toBeUndefined();
  });

  it('reads gray frames for the motion detector unless told otherwise', () => {
    expect(resolveConfig({ file: { ...minimal, detector: { kind: 'motion' } }, env: {} }).source.pixelFormat).toBe('gray');
    expect(resolveConfig({ file: { ...minimal, source: { url: 'a.mp4', pixelFormat: 'rgb24' }, detector: { kind: 'motion' } }, env: {} }).source.pixelFormat).toBe('rgb24');
    expect(resolveConfig({ file: { ...minimal, source: { url: 'a.mp4', pixelFormat: 'gray' } }, env: {} }).source.pixelFormat).toBe('gray');
  });

  it('lets the environment override the file for secrets, and flags override both', () => {
    const env = { HIVEGATE_TOKEN: 'from-env', HIVEGATE_CLOUD_URL: 'https://cloud.example' };
    const config = resolveConfig({ file: { ...minimal, source: { url: 'a.mp4', fps: 10 } }, flags: { source: { url: 'b.mp4' } }, env });
    expect(config.source.url).toBe('b.mp4');
    expect(config.source.fps).toBe(10);
    expect(config.cloud).toMatchObject({ token: 'from-env', url: 'https://cloud.example' });
    // A stale HIVEGATE_TOKEN in the shell beat an explicit --token, and the run failed with 401.
    expect(resolveConfig({ file: minimal, flags: { cloud: { token: 'from-flag' } }, env }).cloud).toMatchObject({ token: 'from-flag', url: 'https://cloud.example' });
  });

  // Each of these zones passed, and the agent counted 0 for good without a word.
  it('refuses a zone that could never count: no area, crossing edges, outside the frame', () => {
    const withZone = (zone: number[][], source = { url: 'a.mp4' }) => () => resolveConfig({ file: { ...minimal, source, counting: { zone } } as never, env: {} });
    expect(withZone([[0, 0], [0, 0], [0, 0]])).toThrow('invalid configuration: counting.zone encloses no area: its points lie on one line or repeat');
    expect(withZone([[0, 0], [100, 100], [200, 200]])).toThrow('counting.zone encloses no area');
    expect(withZone([[0, 0], [100, 0], [0, 100], [100, 100]])).toThrow('invalid configuration: counting.zone has edges that cross (point 2 to 3 and point 4 to 1): list the points in order around the zone');
    expect(withZone([[5000, 5000], [5100, 5000], [5100, 5100]])).toThrow('invalid configuration: counting.zone lies wholly outside the 640x480 frame (source.width and source.height)');
    // The 640x480 example's zone kept after the picture was made smaller.
    expect(withZone([[400, 300], [600, 300], [600, 400], [400, 400]], { url: 'a.mp4', width: 320, height: 240 } as never)).toThrow('lies wholly outside the 320x240 frame');
    // Usable: a zone reaching past the frame's edges, a concave one, and either winding.
    expect(withZone([[-10, 200], [650, 200], [650, 500], [-10, 500]])).not.toThrow();
    expect(withZone([[0, 300], [300, 300], [320, 350], [340, 300], [640, 300], [640, 480], [0, 480]])).not.toThrow();
    expect(withZone([[0, 480], [640, 480], [640, 300], [0, 300]])).not.toThrow();
  });

  // A zone drawn on a full-resolution screenshot passed for a 640x480 source ("config ok") and then counted nothing.
  it('refuses zone points outside the frame by their paths, naming the frame size, with 5 % to spare past the edges', () => {
    const withZone = (zone: number[][], source = { url: 'a.mp4' }) => () => resolveConfig({ file: { ...minimal, source, counting: { zone } } as never, env: {} });
    expect(withZone([[73, 96], [900, 96], [900, 700], [73, 700]])).toThrow(
      'invalid configuration: counting.zone[1] (900, 96), counting.zone[2] (900, 700) and counting.zone[3] (73, 700) lie outside the 640x480 frame (source.width and source.height), more than 5 % past its edge: zone points are pixels of the frame the picture is scaled to, so a zone drawn on a picture of another size must be scaled to 640x480',
    );
    expect(withZone([[0, 240], [640, 240], [640, 600], [0, 480]])).toThrow('invalid configuration: counting.zone[2] (640, 600) lies outside the 640x480 frame');
    expect(withZone([[-40, 240], [640, 240], [640, 480], [0, 480]])).toThrow('counting.zone[0] (-40, 240) lies outside');
    // The size is the configured one, to which every picture is scaled.
    expect(withZone([[73, 96], [900, 96], [900, 700], [73, 700]], { url: 'a.mp4', width: 1280, height: 720 } as never)).not.toThrow();
    // Up to 5 % past an edge (32 px of 640, 24 of 480), and on the edges themselves.
    expect(withZone([[-32, 300], [672, 300], [672, 504], [-32, 504]])).not.toThrow();
    expect(withZone([[0, 0], [640, 0], [640, 480], [0, 480]])).not.toThrow();
  });

  it('names the path of a bad field', () => {
    const bad = { ...minimal, counting: { zone: [[0, 0], [1, 1], ['x', 2]] } };
    expect(() => resolveConfig({ file: bad as never, env: {} })).toThrow('invalid configuration: counting.zone[2][0] must be a number');
    expect(() => resolveConfig({ file: { ...minimal, source: { url: 'a', fps: 0 } }, env: {} })).toThrow(/source\.fps must be > 0/);
    expect(() => resolveConfig({ file: { ...minimal, detectr: {} } as never, env: {} })).toThrow('invalid configuration: detectr is not an allowed property');
    expect(() => resolveConfig({ file: { ...minimal, counting: { edgeBandPx: -1 } } as never, env: {} })).toThrow(/counting\.edgeBandPx must be >= 0/);
    expect(() => resolveConfig({ file: { ...minimal, detector: { motion: { referenceLuma: -1 } } } as never, env: {} })).toThrow(/detector\.motion\.referenceLuma must be >= 0/);
    expect(() => resolveConfig({ file: { ...minimal, detector: { motion: { minThreshold: 0 } } } as never, env: {} })).toThrow(/detector\.motion\.minThreshold must be >= 1/);
    expect(() => resolveConfig({ file: { ...minimal, cloud: undefined } as never, env: {} })).toThrow(/cloud\.(url|token) is required/);
    // "cloud.token is required" alone did not say where the service looks for it.
    expect(() => resolveConfig({ file: { ...minimal, cloud: { url: 'http://127.0.0.1' } } as never, env: {} })).toThrow(
      'invalid configuration: cloud.token is required: set the device\'s token in HIVEGATE_TOKEN, in the environment or the secrets file (the service\'s /etc/hivegate/agent.env, HIVEGATE_TOKEN=…), or as cloud.token',
    );
  });

  // Only the first problem was reported: a file with three mistakes took three runs to fix.
  it('reports every problem of a file at once, each on its own line', () => {
    const bad = { ...minimal, source: { url: 'a.mp4', fps: 0 }, cloud: { url: 'http://', token: 't' }, detector: { kind: 'yolo' }, sensor: {} };
    expect(() => resolveConfig({ file: bad as never, env: {} })).toThrow(
      [
        'invalid configuration, 4 problems:',
        '  - sensor is not an allowed property',
        '  - source.fps must be > 0',
        '  - cloud.url must be an http:// or https:// address with a host name',
        '  - detector.kind must be one of "motion", "onnx"',
      ].join('\n'),
    );
    const crossed = { ...minimal, tracker: { lowScore: 0.9, highScore: 0.5 }, counting: { zone: [[0, 0], [0, 0], [0, 0]] } };
    expect(() => resolveConfig({ file: crossed, env: {} })).toThrow(
      'invalid configuration, 2 problems:\n  - tracker.lowScore must not exceed tracker.highScore\n  - counting.zone encloses no area: its points lie on one line or repeat',
    );
  });

  // "http://" passed the prefix check, and every upload then failed on a URL with no host.
  it('wants a cloud address with a host', () => {
    const withUrl = (url: string) => () => resolveConfig({ file: { ...minimal, cloud: { url, token: 't' } }, env: {} });
    for (const url of ['http://', 'https:///path', 'http:cloud.example', 'ftp://cloud.example', 'cloud.example:8600', 'http//cloud.example', 'http:// cloud.example']) {
      expect(withUrl(url)).toThrow('invalid configuration: cloud.url must be an http:// or https:// address with a host name');
    }
    for (const url of ['http://127.0.0.1:8600', 'https://cloud.example/hivegate/', 'http://[::1]:8600', 'http://hive-7.local']) expect(withUrl(url)).not.toThrow();
  });

  it('defaults the live settings and the device id, and checks the sensor source', () => {
    const config = resolveConfig({ file: minimal, env: {} });
    expect(config.live).toEqual({ enabled: true, statusIntervalSeconds: 30, pollWaitSeconds: 20, jpegFps: 4, startTimeoutSeconds: 30 });
    expect(config.deviceId).toBe(hostname().replace(/:/g, '-'));
    expect(config.sensors).toBeUndefined();
    expect(resolveConfig({ file: { ...minimal, sensors: { command: 'read-scale' } }, env: {} }).sensors).toEqual({ command: 'read-scale', intervalSeconds: 60, timeoutSeconds: 10 });
    expect(() => resolveConfig({ file: { ...minimal, sensors: {} }, env: {} })).toThrow('sensors needs exactly one of sensors.command or sensors.file');
    expect(() => resolveConfig({ file: { ...minimal, sensors: { command: 'a', file: 'b' } }, env: {} })).toThrow('sensors needs exactly one of');
    expect(() => resolveConfig({ file: { ...minimal, live: { pollWaitSeconds: 60 } }, env: {} })).toThrow('live.pollWaitSeconds must be <= 25');
    expect(() => resolveConfig({ file: { ...minimal, deviceId: 'a:b' }, env: {} })).toThrow('deviceId has an invalid format');
  });

  it('uses the shipped pair for the onnx detector unless a model is named: 8-bit with the slot pass, float without', () => {
    const detectorOf = (detector: object) => resolveConfig({ file: { ...minimal, detector } as never, env: {} }).detector;
    expect(detectorOf({ kind: 'onnx' })).toMatchObject({ model: INT8_MODEL_PATH, slot: { model: SLOT_INT8_MODEL_PATH } });
    const slotOff = detectorOf({ slot: false });
    expect(slotOff.model).toBe(FLOAT_MODEL_PATH);
    expect(slotOff).not.toHaveProperty('slot');
    // A slot model of one's own beside the shipped whole-frame model: its 8-bit copy, the slot pass's partner.
    expect(detectorOf({ slot: { model: '/m/slot.onnx' } })).toMatchObject({ model: INT8_MODEL_PATH, slot: { model: '/m/slot.onnx' } });
    const named = detectorOf({ model: '/models/yolo.onnx' });
    expect(named.model).toBe('/models/yolo.onnx');
    expect(named.slot).toBeUndefined();
    const motion = detectorOf({ kind: 'motion' });
    expect(motion.model).toBeUndefined();
    expect(motion.slot).toBeUndefined();
  });

  it('sets the tracker\'s match radius and birth score for the detector, unless they are given', () => {
    const trackerOf = (file: object) => resolveConfig({ file: { ...minimal, ...file } as never, env: {} }).tracker;
    expect(trackerOf({})).toMatchObject({ gateLengths: 0.15, birthScore: 0.65, minHits: 3 });
    expect(trackerOf({ detector: { kind: 'motion' } })).toMatchObject({ gateLengths: 0.3, birthScore: 0.6, minHits: 3 });
    expect(trackerOf({ detector: { kind: 'motion' }, tracker: { gateLengths: 0.5 } })).toMatchObject({ gateLengths: 0.5, birthScore: 0.6 });
    expect(trackerOf({ tracker: { birthScore: 0.9 } })).toMatchObject({ gateLengths: 0.15, birthScore: 0.9 });
  });

  it('keeps the frame-counted defaults to the same time at another rate than 30 fps, unless they are given', () => {
    const at = (file: object, flags: object = {}) => {
      const config = resolveConfig({ file: { ...minimal, ...file } as never, flags: flags as never, env: {} });
      return { minHits: config.tracker.minHits, maxMissedFrames: config.tracker.maxMissedFrames, interactionMinFrames: config.counting.interactionMinFrames };
    };
    expect(at({})).toEqual({ minHits: 3, maxMissedFrames: 20, interactionMinFrames: 3 });
    expect(at({ source: { url: 'cam.mp4', fps: 15 } })).toEqual({ minHits: 2, maxMissedFrames: 10, interactionMinFrames: 2 });
    expect(at({ source: { url: 'cam.mp4', fps: 60 } })).toEqual({ minHits: 6, maxMissedFrames: 40, interactionMinFrames: 6 });
    expect(at({ source: { url: 'cam.mp4', fps: 2 } })).toEqual({ minHits: 1, maxMissedFrames: 1, interactionMinFrames: 1 });
    // The command line's rate wins over the file's, as it does for the rate itself.
    expect(at({ source: { url: 'cam.mp4', fps: 60 } }, { source: { fps: 15 } })).toMatchObject({ maxMissedFrames: 10 });
    expect(at({ source: { url: 'cam.mp4', fps: 15 }, tracker: { minHits: 3 }, counting: { interactionMinFrames: 4 } })).toEqual({ minHits: 3, maxMissedFrames: 10, interactionMinFrames: 4 });
  });

  it('gives the frame counts for a camera slower than source.fps: defaults follow its rate, values set are kept', () => {
    const config = (file: object) => resolveConfig({ file: { ...minimal, ...file } as never, env: {} });
    expect(frameCountsAt(config({}), 15)).toEqual({ minHits: 2, maxMissedFrames: 10, interactionMinFrames: 2 });
    expect(frameCountsAt(config({}), 25)).toEqual({ minHits: 3, maxMissedFrames: 17, interactionMinFrames: 3 });
    expect(frameCountsAt(config({}), 30)).toEqual({ minHits: 3, maxMissedFrames: 20, interactionMinFrames: 3 });
    expect(frameCountsAt(config({ source: { url: 'cam.mp4', fps: 60 } }), 15)).toEqual({ minHits: 2, maxMissedFrames: 10, interactionMinFrames: 2 });
    expect(frameCountsAt(config({ tracker: { maxMissedFrames: 30 }, counting: { interactionMinFrames: 5 } }), 15)).toEqual({ minHits: 2, maxMissedFrames: 30, interactionMinFrames: 5 });
  });

  it('splits a paused track at a vanished bee for the model, not for the motion detector, unless told', () => {
    const countingOf = (file: object) => resolveConfig({ file: { ...minimal, ...file } as never, env: {} }).counting;
    expect(countingOf({}).reversalHiddenShare).toBe(0.65);
    expect(countingOf({ detector: { kind: 'motion' } }).reversalHiddenShare).toBe(0);
    expect(countingOf({ detector: { kind: 'motion' }, counting: { reversalHiddenShare: 0.5 } }).reversalHiddenShare).toBe(0.5);
    expect(countingOf({ counting: { reversalHiddenShare: 0 } }).reversalHiddenShare).toBe(0);
  });

  it('fills and checks the slot pass\'s settings', () => {
    expect(resolveConfig({ file: { ...minimal, detector: { slot: { model: '/m/slot.onnx', zoom: 1.5 } } }, env: {} }).detector.slot).toEqual({ model: '/m/slot.onnx', zoom: 1.5, marginLengths: 1.5, wholeEvery: 1 });
    // Settings alone are for the shipped slot model; beside a model of one's own, the slot model must be named.
    expect(resolveConfig({ file: { ...minimal, detector: { slot: { wholeEvery: 2 } } } as never, env: {} }).detector.slot).toMatchObject({ model: SLOT_INT8_MODEL_PATH, wholeEvery: 2 });
    expect(() => resolveConfig({ file: { ...minimal, detector: { model: '/m/own.onnx', slot: {} } } as never, env: {} })).toThrow('invalid configuration: detector.slot.model is required');
    expect(() => resolveConfig({ file: { ...minimal, detector: { slot: { model: 'm', zoom: 8 } } }, env: {} })).toThrow(/detector\.slot\.zoom must be <= 4/);
    expect(() => resolveConfig({ file: { ...minimal, detector: { slot: { model: 'm', margin: 1 } } } as never, env: {} })).toThrow('invalid configuration: detector.slot.margin is not an allowed property');
    expect(() => resolveConfig({ file: { ...minimal, detector: { slot: { model: 'm', wholeEvery: 0 } } }, env: {} })).toThrow(/detector\.slot\.wholeEvery must be >= 1/);
    expect(() => resolveConfig({ file: { ...minimal, detector: { slot: { model: 'm', wholeEvery: 1.5 } } }, env: {} })).toThrow('invalid configuration: detector.slot.wholeEvery must be an integer');
    expect(() => resolveConfig({ file: { ...minimal, detector: { kind: 'motion', slot: { model: 'm' } } }, env: {} })).toThrow('invalid configuration: detector.slot needs detector.kind onnx');
  });
});

describe('readConfigFile', () => {
  it('reads YAML and resolves relative paths against the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hivegate-config-'));
    const path = join(dir, 'agent.yaml');
    writeFileSync(path, 'hiveId: 7\nboxId: 3\ndetector:\n  kind: onnx\n  model: models/bee.onnx\n  slot:\n    model: models/slot.onnx\nstateDir: state\n');
    const config = readConfigFile(path);
    expect(config.hiveId).toBe(7);
    expect(config.detector?.model).toBe(join(dir, 'models/bee.onnx'));
    expect(config.detector?.slot?.model).toBe(join(dir, 'models/slot.onnx'));
    expect(config.stateDir).toBe(join(dir, 'state'));
  });
  it('says which file is broken', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hivegate-config-'));
    const path = join(dir, 'bad.yaml');
    writeFileSync(path, 'hiveId: [unclosed\n');
    expect(() => readConfigFile(path)).toThrow(ConfigError);
    expect(() => readConfigFile(path)).toThrow(/bad\.yaml is not valid YAML/);
    expect(() => readConfigFile(join(dir, 'missing.yaml'))).toThrow(/cannot read config file/);
  });
});

describe('parseZone', () => {
  it('parses "x,y" pairs and points at a bad one', () => {
    expect(parseZone('0,240 640,240 640,480')).toEqual([[0, 240], [640, 240], [640, 480]]);
    expect(() => parseZone('0,240 640 1,1')).toThrow('--zone point 2 ("640") must be x,y');
  });
});

describe('agent.example.yaml', () => {
  it('is a valid configuration', () => {
    const file = readConfigFile(join(import.meta.dirname, '../../agent.example.yaml'));
    // Its token is a placeholder, refused: check-config said "config ok" for it, and the cloud answered 401.
    expect(() => resolveConfig({ file, env: {} })).toThrow('invalid configuration: cloud.token is the example\'s placeholder "change-me": set the device\'s token in HIVEGATE_TOKEN');
    const config = resolveConfig({ file, env: { HIVEGATE_TOKEN: 'device-token' } });
    expect(config.source.url).toBe('rpicam');
    expect(config.counting.zone).toHaveLength(4);
  });
});
