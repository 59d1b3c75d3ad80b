import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { ConfigError, loadConfig } from './config.ts';

describe('loadConfig', () => {
  it('applies defaults: port 8600 and the embedded database', () => {
    const config = loadConfig({});
    expect(config.port).toBe(8600);
    expect(config.databaseUrl).toBeUndefined();
    expect(config.dataDir).toMatch(/\.data$/);
    expect(config.storage).toEqual({ kind: 'fs', dir: `${config.dataDir}/blobs`, shared: false });
    expect(loadConfig({ STORAGE_SHARED: 'true' }).storage).toMatchObject({ kind: 'fs', shared: true });
  });

  // `DATA_DIR=.data/demo pnpm cli …` from the repository root opened cloud/.data/demo (pnpm runs it inside cloud/).
  it('takes a relative DATA_DIR from where pnpm was called, and keeps the default in the service folder', () => {
    expect(loadConfig({ DATA_DIR: '.data/demo', INIT_CWD: '/srv/hivegate' }).dataDir).toBe('/srv/hivegate/.data/demo');
    expect(loadConfig({ DATA_DIR: '/var/lib/hivegate', INIT_CWD: '/srv/hivegate' }).dataDir).toBe('/var/lib/hivegate');
    expect(loadConfig({ INIT_CWD: '/srv/hivegate' }).dataDir).toBe(path.resolve('.data'));
    expect(loadConfig({ DATA_DIR: 'data' }).dataDir).toBe(path.resolve('data'));
  });

  it('reads numbers, lists and URLs', () => {
    const config = loadConfig({ PORT: '9000', DATABASE_URL: 'postgres://u@h/db', CORS_ORIGINS: 'https://a.example, https://b.example', PUBLIC_URL: 'https://hive.example/' });
    expect(config).toMatchObject({ port: 9000, databaseUrl: 'postgres://u@h/db', corsOrigins: ['https://a.example', 'https://b.example'], publicUrl: 'https://hive.example' });
  });

  it('reads the video, job and heatmap settings with their defaults', () => {
    const defaults = loadConfig({});
    expect(defaults.video).toEqual({ maxBytes: 500 * 1024 * 1024, ffmpegPath: undefined, ffprobePath: undefined });
    expect(defaults.jobs).toEqual({ workers: 1, leaseSeconds: 30, pollSeconds: 15 });
    expect(defaults.heatmaps).toEqual({ grid: { cols: 160, rows: 120 }, renderDebounceSeconds: 10 });
    const config = loadConfig({ VIDEO_MAX_BYTES: '1048576', JOB_WORKERS: '0', HEATMAP_RENDER_DEBOUNCE_SECONDS: '2.5', FFMPEG_PATH: process.execPath });
    expect(config).toMatchObject({ video: { maxBytes: 1048576, ffmpegPath: process.execPath }, jobs: { workers: 0 }, heatmaps: { renderDebounceSeconds: 2.5 } });
  });

  it('reads the live gateway timings, with defaults', () => {
    expect(loadConfig({}).live).toMatchObject({ deviceOnlineSeconds: 120, keepaliveTimeoutSeconds: 90, stopGraceSeconds: 20, commandRedeliverySeconds: 10 });
    expect(loadConfig({ LIVE_KEEPALIVE_TIMEOUT_SECONDS: '1.5', DEVICE_ONLINE_SECONDS: '30' }).live).toMatchObject({ keepaliveTimeoutSeconds: 1.5, deviceOnlineSeconds: 30 });
    expect(() => loadConfig({ LIVE_KEEPALIVE_TIMEOUT_SECONDS: '0' })).toThrow('LIVE_KEEPALIVE_TIMEOUT_SECONDS must be >= 1');
  });

  it('believes forwarded headers from loopback and private networks only, unless told otherwise', () => {
    expect(loadConfig({}).trustProxy).toBe('loopback,linklocal,uniquelocal');
    expect(loadConfig({ METRICS_TOKEN: 'scrape-0123456789abcdef' }).metricsToken).toBe('scrape-0123456789abcdef');
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow('METRICS_TOKEN must');
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, ::1, 203.0.113.7' }).trustProxy).toBe('10.0.0.0/8, ::1, 203.0.113.7');
    expect(() => loadConfig({ TRUST_PROXY: 'nginx,10.0.0.0/40,2' })).toThrow('TRUST_PROXY must be true, false, or addresses and CIDR ranges (or loopback, linklocal, uniquelocal) separated by commas; not "nginx", "10.0.0.0/40", "2"');
  });

  it('takes sign-ups unless SIGNUP is closed', () => {
    expect(loadConfig({}).signUp).toBe('open');
    expect(loadConfig({ SIGNUP: 'closed' }).signUp).toBe('closed');
    expect(() => loadConfig({ SIGNUP: 'off' })).toThrow('SIGNUP must be');
  });

  it('reads the JPEG push relay settings, with defaults', () => {
    expect(loadConfig({}).live).toMatchObject({ maxFrameBytes: 2 * 1024 * 1024, defaultRelayProtocol: 'hls' });
    expect(loadConfig({ LIVE_MAX_FRAME_BYTES: '500000', LIVE_DEFAULT_RELAY_PROTOCOL: 'http-jpeg-push' }).live).toMatchObject({ maxFrameBytes: 500_000, defaultRelayProtocol: 'http-jpeg-push' });
    expect(() => loadConfig({ LIVE_DEFAULT_RELAY_PROTOCOL: 'webrtc' })).toThrow('LIVE_DEFAULT_RELAY_PROTOCOL must be');
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT must be an integer'],
    [{ PORT: '70000' }, 'PORT must be <= 65535'],
    // Another database's URL got only "has an invalid format", not what was expected instead.
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL must start with postgres:// or postgresql://, not mysql: (postgres://user:password@host:5432/database)'],
    // An unencoded # passed, cut the address short and failed later as "getaddrinfo ENOTFOUND ss", naming part of the password.
    [{ DATABASE_URL: 'postgres://postgres:p@ss#word@127.0.0.1/db' }, 'DATABASE_URL holds a #, which ends the address (what follows it is ignored): a user name or password holding / # @ ? : or % must be percent-encoded'],
    [{ JWT_SECRET: 'short' }, 'JWT_SECRET must be at least 32 characters long'],
    [{ STORAGE: 's3', S3_BUCKET: 'bees' }, 'S3_ACCESS_KEY_ID is required when STORAGE is s3'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of "fatal", "error"'],
    [{ STORAGE_SHARED: 'yes' }, 'STORAGE_SHARED must be one of "true", "false"'],
    // Left set after a move to S3, it read as if the instances shared a folder.
    [{ STORAGE: 's3', S3_BUCKET: 'bees', S3_ACCESS_KEY_ID: 'k', S3_SECRET_ACCESS_KEY: 's', STORAGE_SHARED: 'true' }, 'STORAGE_SHARED=true is for STORAGE=fs'],
    [{ VIDEO_MAX_BYTES: '12kB' }, 'VIDEO_MAX_BYTES must be an integer'],
    [{ JOB_WORKERS: '-1' }, 'JOB_WORKERS must be >= 0'],
    [{ HEATMAP_GRID_COLS: '5000' }, 'HEATMAP_GRID_COLS must be <= 4096'],
    // A password holding / or # passed the prefix check, and the start-up ended in a stack trace ("Invalid URL").
    [{ DATABASE_URL: 'postgres://hive:Ab/cd+e#f==@db:5432/hivegate' }, 'DATABASE_URL is not a valid URL: a user name or password holding / # @ ? : or % must be percent-encoded'],
    // "https://" alone passed the prefix check, and every link the cloud made had no host.
    [{ PUBLIC_URL: 'https://' }, 'PUBLIC_URL must be an http:// or https:// address with a host name'],
    [{ S3_ENDPOINT: 'minio:9000' }, 'S3_ENDPOINT must be an http:// or https:// address with a host name'],
    // A wrong FFMPEG_PATH let the service start and take uploads whose transcodes then failed for ever.
    [{ FFMPEG_PATH: '/nonexistent/ffmpeg' }, 'FFMPEG_PATH must be an executable file: /nonexistent/ffmpeg does not exist'],
    [{ FFPROBE_PATH: '/usr' }, 'FFPROBE_PATH must be an executable file: /usr is not a file'],
  ])('names the variable in error %#', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  // S3's missing variables came one restart at a time, and only once everything else was right.
  it('names every variable S3 storage lacks at once', () => {
    expect(() => loadConfig({ STORAGE: 's3' })).toThrow(
      'invalid configuration, 3 problems:\n  - S3_BUCKET is required when STORAGE is s3\n  - S3_ACCESS_KEY_ID is required when STORAGE is s3\n  - S3_SECRET_ACCESS_KEY is required when STORAGE is s3',
    );
    expect(loadConfig({ DATABASE_URL: `postgres://hive:${encodeURIComponent('Ab/cd+e#f==')}@db:5432/hivegate` }).databaseUrl).toContain('Ab%2Fcd%2Be%23f%3D%3D');
  });

  // "*" answered every site's preflight with credentials, and a trailing slash never matched any browser's Origin.
  it('takes only CORS_ORIGINS entries that are origins as browsers send them', () => {
    expect(loadConfig({ CORS_ORIGINS: 'https://app.example.org, http://localhost:5173' }).corsOrigins).toEqual(['https://app.example.org', 'http://localhost:5173']);
    expect(() => loadConfig({ CORS_ORIGINS: '*' })).toThrow('CORS_ORIGINS entry "*" is a wildcard: list each web app origin');
    expect(() => loadConfig({ CORS_ORIGINS: 'https://ok.example, https://app.example.org/' })).toThrow(
      'CORS_ORIGINS entry "https://app.example.org/" is not an origin as browsers send it (no path, query or trailing slash; lower-case host; no default port): use "https://app.example.org"',
    );
    expect(() => loadConfig({ CORS_ORIGINS: 'https://App.example.org:443/app' })).toThrow('use "https://app.example.org"');
    expect(() => loadConfig({ CORS_ORIGINS: 'app.example.org' })).toThrow('CORS_ORIGINS entry "app.example.org" must be an origin: http:// or https://, a host and an optional port');
    expect(() => loadConfig({ CORS_ORIGINS: 'ftp://files.example' })).toThrow('CORS_ORIGINS entry "ftp://files.example" must be an origin');
    expect(() => loadConfig({ CORS_ORIGINS: 'https://*.example.org' })).toThrow('is a wildcard');
  });

  // Only the first bad variable was named: an environment with three mistakes took three restarts to fix.
  it('names every bad variable at once', () => {
    expect(() => loadConfig({ PORT: 'eighty', LOG_LEVEL: 'loud', PUBLIC_URL: 'http://' })).toThrow(
      [
        'invalid configuration, 3 problems:',
        '  - PORT must be an integer',
        '  - PUBLIC_URL must be an http:// or https:// address with a host name',
        '  - LOG_LEVEL must be one of "fatal", "error", "warn", "info", "debug", "trace", "silent"',
      ].join('\n'),
    );
  });
});
