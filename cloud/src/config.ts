import { Type, type Static } from 'typebox';
import { compileConfigCheck, HTTP_URL, invalidConfigMessage } from '@hivegate/shared';
import { isIP } from 'node:net';
import path from 'node:path';
import type { BlobStoreConfig } from './storage/index.ts';
import type { JobQueueConfig } from './jobs/job-queue.ts';
import type { GridSize } from './heatmaps/grid.ts';
import { executableProblem } from './video/ffmpeg.ts';

/**
 * Everything the cloud reads from its environment, validated once at start. The schema names environment
 * variables so that an error points at exactly what to fix (`PORT must be <= 65535`).
 */
const Env = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8600 }),
  HOST: Type.String({ minLength: 1, default: '0.0.0.0' }),
  // Its scheme and form are checked in databaseUrlProblems, which can say what is expected without echoing a password.
  DATABASE_URL: Type.Optional(Type.String({ minLength: 1 })),
  DATA_DIR: Type.String({ minLength: 1, default: '.data' }),
  JWT_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  PUBLIC_URL: Type.Optional(Type.String({ format: HTTP_URL })),
  BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, default: 4 * 1024 * 1024 }),
  DB_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 500, default: 10 }),
  HEALTH_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 2000 }),
  TOKEN_CACHE_SECONDS: Type.Number({ minimum: 0, maximum: 60, default: 2 }),
  RETENTION_DAYS: Type.Integer({ minimum: 1, default: 730 }),
  PARTITION_MAINTENANCE: Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'true' }),
  DEDUPE_RETENTION_DAYS: Type.Integer({ minimum: 1, default: 30 }),
  CORS_ORIGINS: Type.String({ default: '' }),
  TRUST_PROXY: Type.String({ minLength: 1, default: 'loopback,linklocal,uniquelocal' }),
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16 })),
  SIGNUP: Type.Union([Type.Literal('open'), Type.Literal('closed')], { default: 'open' }),
  STORAGE: Type.Union([Type.Literal('fs'), Type.Literal('s3')], { default: 'fs' }),
  STORAGE_SHARED: Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'false' }),
  S3_ENDPOINT: Type.Optional(Type.String({ format: HTTP_URL })),
  S3_REGION: Type.String({ minLength: 1, default: 'us-east-1' }),
  S3_BUCKET: Type.Optional(Type.String({ minLength: 3, maxLength: 63 })),
  S3_ACCESS_KEY_ID: Type.Optional(Type.String({ minLength: 1 })),
  S3_SECRET_ACCESS_KEY: Type.Optional(Type.String({ minLength: 1 })),
  S3_FORCE_PATH_STYLE: Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'true' }),
  S3_PREFIX: Type.String({ default: '' }),
  MEDIA_URL_TTL_SECONDS: Type.Integer({ minimum: 30, maximum: 7 * 86_400, default: 3600 }),
  JOB_WORKERS: Type.Integer({ minimum: 0, maximum: 64, default: 1 }),
  JOB_LEASE_SECONDS: Type.Number({ minimum: 1, maximum: 3600, default: 30 }),
  JOB_POLL_SECONDS: Type.Number({ minimum: 0.1, maximum: 3600, default: 15 }),
  VIDEO_MAX_BYTES: Type.Integer({ minimum: 1024, default: 500 * 1024 * 1024 }),
  FFMPEG_PATH: Type.Optional(Type.String({ minLength: 1 })),
  FFPROBE_PATH: Type.Optional(Type.String({ minLength: 1 })),
  HEATMAP_GRID_COLS: Type.Integer({ minimum: 1, maximum: 4096, default: 160 }),
  HEATMAP_GRID_ROWS: Type.Integer({ minimum: 1, maximum: 4096, default: 120 }),
  HEATMAP_RENDER_DEBOUNCE_SECONDS: Type.Number({ minimum: 0, maximum: 86_400, default: 10 }),
  DEVICE_ONLINE_SECONDS: Type.Number({ minimum: 1, maximum: 86_400, default: 120 }),
  LIVE_KEEPALIVE_TIMEOUT_SECONDS: Type.Number({ minimum: 1, maximum: 3600, default: 90 }),
  LIVE_STOP_GRACE_SECONDS: Type.Number({ minimum: 0.1, maximum: 600, default: 20 }),
  LIVE_START_TIMEOUT_SECONDS: Type.Number({ minimum: 1, maximum: 3600, default: 60 }),
  LIVE_PUBLISHER_SILENCE_SECONDS: Type.Number({ minimum: 1, maximum: 3600, default: 30 }),
  LIVE_COMMAND_REDELIVERY_SECONDS: Type.Number({ minimum: 0.1, maximum: 600, default: 10 }),
  LIVE_SWEEP_INTERVAL_MS: Type.Integer({ minimum: 50, maximum: 60_000, default: 2000 }),
  LIVE_PLAYBACK_URL_TTL_SECONDS: Type.Integer({ minimum: 60, maximum: 86_400, default: 900 }),
  LIVE_MAX_SEGMENT_BYTES: Type.Integer({ minimum: 64 * 1024, maximum: 256 * 1024 * 1024, default: 16 * 1024 * 1024 }),
  LIVE_CLIP_MAX_SEGMENTS: Type.Integer({ minimum: 1, maximum: 100_000, default: 1800 }),
  LIVE_HISTORY_DAYS: Type.Number({ minimum: 1, maximum: 3650, default: 30 }),
  LIVE_MAX_FRAME_BYTES: Type.Integer({ minimum: 1024, maximum: 64 * 1024 * 1024, default: 2 * 1024 * 1024 }),
  LIVE_DEFAULT_RELAY_PROTOCOL: Type.Union([Type.Literal('hls'), Type.Literal('http-jpeg-push')], { default: 'hls' }),
  LOG_LEVEL: Type.Union(
    [Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'), Type.Literal('debug'), Type.Literal('trace'), Type.Literal('silent')],
    { default: 'info' },
  ),
});
type Env = Static<typeof Env>;

/** Every environment variable the cloud reads. */
export const ENV_VARIABLES: readonly string[] = Object.keys(Env.properties);

/**
 * How long a stopping server lets requests and the database finish before it exits anyway. Whatever stops it
 * (docker-compose.yml's stop_grace_period, a systemd TimeoutStopSec) must wait longer than this.
 */
export const SHUTDOWN_TIMEOUT_MS = 15_000;

export interface Config {
  port: number;
  host: string;
  /** Postgres server URL; unset means the embedded database under dataDir. */
  databaseUrl?: string;
  dataDir: string;
  jwtSecret?: string;
  publicUrl?: string;
  bodyLimitBytes: number;
  dbPoolSize: number;
  healthTimeoutMs: number;
  tokenCacheSeconds: number;
  retentionDays: number;
  /** Off when an external tool (pg_partman, TimescaleDB) owns the time partitions. */
  partitionMaintenance: boolean;
  dedupeRetentionDays: number;
  corsOrigins: string[];
  /**
   * Which peers' X-Forwarded-For/-Proto/-Host are believed (client addresses for sign-in throttling, https for the
   * cookie): true for any, false for none, or addresses and CIDR ranges (fastify's trustProxy).
   */
  trustProxy: boolean | string;
  /** When set, `/metrics` answers only requests that bear it (`Authorization: Bearer …`), as a scraper can send. */
  metricsToken?: string;
  /**
   * Whether anyone may make an account with signUp (`open`, as the demo needs) or only the admin CLI makes them
   * (`closed`), for a server that is reachable by more than its own beekeepers.
   */
  signUp: 'open' | 'closed';
  logLevel: Env['LOG_LEVEL'];
  storage: BlobStoreConfig;
  /** Lifetime of the signed URLs that let players fetch media without custom headers. */
  mediaUrlTtlSeconds: number;
  jobs: JobQueueConfig;
  video: VideoConfig;
  heatmaps: HeatmapConfig;
  live: LiveConfig;
}

export interface VideoConfig {
  /** Largest accepted upload (each file of a request), bytes. */
  maxBytes: number;
  /** Explicit ffmpeg / ffprobe binaries; unset means the ones on PATH. */
  ffmpegPath?: string;
  ffprobePath?: string;
}

export interface HeatmapConfig {
  grid: GridSize;
  /** A day's heatmap is re-rendered at most this often while uploads keep arriving. */
  renderDebounceSeconds: number;
}

/** Timings and bounds of the live gateway (cloud/src/live). */
export interface LiveConfig {
  /** A device seen within this many seconds counts as online (status, poll and events are sightings). */
  deviceOnlineSeconds: number;
  /** A session nobody keeps alive for this long expires (and its device is told to stop). */
  keepaliveTimeoutSeconds: number;
  /** How long a STOPPING session waits for the device's STREAM_STOPPED before it is called STOPPED anyway. */
  stopGraceSeconds: number;
  /**
   * A session the device took up (STARTING) with nothing playable by then fails START_TIMEOUT and the device is
   * told to stop. Longer than the agent's own start time-out (30 s), so a device that can report its failure does.
   */
  startTimeoutSeconds: number;
  /**
   * An ACTIVE session with no playlist or frame for this long fails PUBLISHER_LOST (the agent crashed, or its
   * uplink died). Longer than the agent's own give-up time (15 s without an accepted upload).
   */
  publisherSilenceSeconds: number;
  /** An unacknowledged command is handed out again on a poll this long after its last delivery. */
  commandRedeliverySeconds: number;
  /** How often every instance looks for expired keep-alives, elapsed stop graces and media to clean up. */
  sweepIntervalMs: number;
  /** Lifetime of the signed playback URL handed out on each read and keep-alive. */
  playbackUrlTtlSeconds: number;
  /** Largest segment a publisher may PUT. */
  maxSegmentBytes: number;
  /** Segments kept for clip hand-off (at 1 s per segment: the longest clip). */
  clipMaxSegments: number;
  /** Ended sessions (and their commands) are deleted this long after they ended. */
  historyDays: number;
  /** Largest JPEG frame an http-jpeg-push publisher may POST. */
  maxFrameBytes: number;
  /** The relay offered first to a device that does not say which ones it speaks (see live/relay-choice.ts). */
  defaultRelayProtocol: 'hls' | 'http-jpeg-push';
}

export class ConfigError extends Error {}

const checkEnv = compileConfigCheck(Env);
/** Variables whose schema is a number are parsed from their text; the schema then checks the number. */
const isNumeric = (schema: unknown): boolean => ['integer', 'number'].includes(String((schema as { type?: unknown }).type));

/** Reads the config from environment variables (strings), applying defaults; throws ConfigError naming the variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(Env.properties)) {
    const value = env[name];
    if (value === undefined || value === '') {
      if ('default' in schema) raw[name] = schema.default;
      continue;
    }
    raw[name] = isNumeric(schema) ? parseNumber(value) : value;
  }
  const checked = checkEnv(raw);
  if (!checked.ok) throw new ConfigError(invalidConfigMessage(checked.problems));
  const e = checked.value;
  const problems = [...databaseUrlProblems(e.DATABASE_URL), ...corsOriginProblems(e.CORS_ORIGINS), ...storageProblems(e), ...trustProxyProblems(e.TRUST_PROXY), ...mediaToolProblems(e)];
  if (problems.length > 0) throw new ConfigError(invalidConfigMessage(problems));
  // A DATA_DIR typed as a relative path is relative to where it was typed. `pnpm start` and `pnpm cli` run inside
  // cloud/ (pnpm says where it was called from in INIT_CWD), so `DATA_DIR=.data/demo pnpm cli …` from the repository
  // root opened a new, empty cloud/.data/demo and listed no users. The default stays the service's own .data.
  const typedHere = env.DATA_DIR !== undefined && env.DATA_DIR !== '' && env.INIT_CWD ? env.INIT_CWD : '.';
  const dataDir = path.resolve(typedHere, e.DATA_DIR);
  return {
    port: e.PORT,
    host: e.HOST,
    databaseUrl: e.DATABASE_URL,
    dataDir,
    jwtSecret: e.JWT_SECRET,
    publicUrl: e.PUBLIC_URL?.replace(/\/+$/, ''),
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    dbPoolSize: e.DB_POOL_SIZE,
    healthTimeoutMs: e.HEALTH_TIMEOUT_MS,
    tokenCacheSeconds: e.TOKEN_CACHE_SECONDS,
    retentionDays: e.RETENTION_DAYS,
    partitionMaintenance: e.PARTITION_MAINTENANCE === 'true',
    dedupeRetentionDays: e.DEDUPE_RETENTION_DAYS,
    corsOrigins: e.CORS_ORIGINS.split(',').map((o) => o.trim()).filter(Boolean),
    trustProxy: trustProxyOf(e.TRUST_PROXY),
    metricsToken: e.METRICS_TOKEN,
    signUp: e.SIGNUP,
    logLevel: e.LOG_LEVEL,
    storage: storageConfig(e, dataDir),
    mediaUrlTtlSeconds: e.MEDIA_URL_TTL_SECONDS,
    jobs: { workers: e.JOB_WORKERS, leaseSeconds: e.JOB_LEASE_SECONDS, pollSeconds: e.JOB_POLL_SECONDS },
    video: { maxBytes: e.VIDEO_MAX_BYTES, ffmpegPath: e.FFMPEG_PATH, ffprobePath: e.FFPROBE_PATH },
    heatmaps: {
      grid: { cols: e.HEATMAP_GRID_COLS, rows: e.HEATMAP_GRID_ROWS },
      renderDebounceSeconds: e.HEATMAP_RENDER_DEBOUNCE_SECONDS,
    },
    live: {
      deviceOnlineSeconds: e.DEVICE_ONLINE_SECONDS,
      keepaliveTimeoutSeconds: e.LIVE_KEEPALIVE_TIMEOUT_SECONDS,
      stopGraceSeconds: e.LIVE_STOP_GRACE_SECONDS,
      startTimeoutSeconds: e.LIVE_START_TIMEOUT_SECONDS,
      publisherSilenceSeconds: e.LIVE_PUBLISHER_SILENCE_SECONDS,
      commandRedeliverySeconds: e.LIVE_COMMAND_REDELIVERY_SECONDS,
      sweepIntervalMs: e.LIVE_SWEEP_INTERVAL_MS,
      playbackUrlTtlSeconds: e.LIVE_PLAYBACK_URL_TTL_SECONDS,
      maxSegmentBytes: e.LIVE_MAX_SEGMENT_BYTES,
      clipMaxSegments: e.LIVE_CLIP_MAX_SEGMENTS,
      historyDays: e.LIVE_HISTORY_DAYS,
      maxFrameBytes: e.LIVE_MAX_FRAME_BYTES,
      defaultRelayProtocol: e.LIVE_DEFAULT_RELAY_PROTOCOL,
    },
  };
}

/**
 * A URL no driver can read, or one that reads as something else: a password holding / # @ ? came out of the start-up
 * as a stack trace ("TypeError: Invalid URL"), and an unencoded # cut the address short, so that the rest of the
 * password became the host ("getaddrinfo ENOTFOUND ss"). The URL itself is never echoed: it holds the password.
 */
function databaseUrlProblems(url: string | undefined): string[] {
  if (url === undefined) return [];
  if (!/^postgres(ql)?:\/\//i.test(url)) {
    const scheme = /^([a-z][\w+.-]*):/i.exec(url)?.[1];
    return [`DATABASE_URL must start with postgres:// or postgresql://${scheme ? `, not ${scheme}:` : ''} (postgres://user:password@host:5432/database)`];
  }
  const encodeHint = 'a user name or password holding / # @ ? : or % must be percent-encoded (encodeURIComponent)';
  if (!URL.canParse(url)) return [`DATABASE_URL is not a valid URL: ${encodeHint}`];
  if (url.includes('#')) return [`DATABASE_URL holds a #, which ends the address (what follows it is ignored): ${encodeHint}`];
  return [];
}

/**
 * Each entry must be an origin exactly as a browser sends it in Origin: any other string never matches, so the web
 * app it was meant for is refused with nothing said; and "*" would answer every site's preflight with credentials.
 */
function corsOriginProblems(value: string): string[] {
  const problems: string[] = [];
  for (const entry of value.split(',').map((o) => o.trim()).filter(Boolean)) {
    const problem = corsOriginProblem(entry);
    if (problem) problems.push(`CORS_ORIGINS entry ${JSON.stringify(entry)} ${problem}`);
  }
  return problems;
}

function corsOriginProblem(entry: string): string | undefined {
  if (entry.includes('*')) return 'is a wildcard: list each web app origin (https://app.example.org), as any site could otherwise call the API with the user\'s cookie';
  const url = URL.canParse(entry) ? new URL(entry) : undefined;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) return 'must be an origin: http:// or https://, a host and an optional port (https://app.example.org)';
  // url.origin is what a browser sends: lower-case host, no default port, no path, no trailing slash.
  if (url.origin !== entry) return `is not an origin as browsers send it (no path, query or trailing slash; lower-case host; no default port): use ${JSON.stringify(url.origin)}`;
  return undefined;
}

/** proxy-addr's names for address ranges, which TRUST_PROXY may list beside addresses. */
const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function trustProxyOf(value: string): boolean | string {
  return value === 'true' || value === 'false' ? value === 'true' : value;
}

/** Each entry of an address list must be an address, a CIDR range or one of proxy-addr's names. */
function trustProxyProblems(value: string): string[] {
  if (value === 'true' || value === 'false') return [];
  const bad = value.split(',').map((entry) => entry.trim()).filter((entry) => {
    if (PROXY_NAMES.has(entry)) return false;
    const [address = '', bits, ...rest] = entry.split('/');
    const version = isIP(address);
    const maxBits = version === 4 ? 32 : 128;
    return version === 0 || rest.length > 0 || (bits !== undefined && !(/^\d+$/.test(bits) && Number(bits) <= maxBits));
  });
  return bad.length === 0
    ? []
    : [`TRUST_PROXY must be true, false, or addresses and CIDR ranges (or loopback, linklocal, uniquelocal) separated by commas; not ${bad.map((b) => JSON.stringify(b)).join(', ')}`];
}

/**
 * An explicit ffmpeg or ffprobe must be there at start: a wrong FFMPEG_PATH let the service start and take uploads
 * whose transcodes then failed for ever. (Unset, the tools come from PATH; app.ts warns when they are not there.)
 */
function mediaToolProblems(e: Env): string[] {
  return (['FFMPEG_PATH', 'FFPROBE_PATH'] as const).flatMap((name) => {
    const file = e[name];
    const problem = file === undefined ? undefined : executableProblem(file);
    return problem ? [`${name} must be an executable file: ${file} ${problem}`] : [];
  });
}

/** Every variable S3 storage needs, named together. */
function storageProblems(e: Env): string[] {
  if (e.STORAGE !== 's3') return [];
  const missing = (['S3_BUCKET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'] as const).filter((name) => !e[name]).map((name) => `${name} is required when STORAGE is s3`);
  // Said rather than ignored: left set, it reads as if the instances shared a folder.
  const shared = e.STORAGE_SHARED === 'true' ? ['STORAGE_SHARED=true is for STORAGE=fs (a DATA_DIR/blobs folder every instance mounts); a bucket is shared already, unset it'] : [];
  return [...missing, ...shared];
}

function storageConfig(e: Env, dataDir: string): BlobStoreConfig {
  if (e.STORAGE === 'fs') return { kind: 'fs', dir: path.join(dataDir, 'blobs'), shared: e.STORAGE_SHARED === 'true' };
  return {
    kind: 's3',
    endpoint: e.S3_ENDPOINT,
    region: e.S3_REGION,
    bucket: e.S3_BUCKET!,
    accessKeyId: e.S3_ACCESS_KEY_ID!,
    secretAccessKey: e.S3_SECRET_ACCESS_KEY!,
    forcePathStyle: e.S3_FORCE_PATH_STYLE === 'true',
    prefix: e.S3_PREFIX || undefined,
    createBucket: true,
  };
}

/** "8600" → 8600; anything else is kept as the string so the schema reports it as not a number. */
function parseNumber(value: string): number | string {
  const n = Number(value.trim());
  return value.trim() !== '' && Number.isFinite(n) ? n : value;
}

/** The defaults, for tests and tools that build a config in code. */
export function defaultConfig(overrides: Partial<Config> = {}): Config {
  return { ...loadConfig({}), ...overrides };
}
