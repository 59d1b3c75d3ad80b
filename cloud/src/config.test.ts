import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.ts';

describe('loadConfig', () => {
  it('applies defaults: port 8600 and the embedded database', () => {
    const config = loadConfig({});
    expect(config.port).toBe(8600);
    expect(config.databaseUrl).toBeUndefined();
    expect(config.dataDir).toMatch(/\.data$/);
    expect(config.storage).toEqual({ kind: 'fs', dir: `${config.dataDir}/blobs` });
  });

  it('reads numbers, lists and URLs', () => {
    const config = loadConfig({ PORT: '9000', DATABASE_URL: 'postgres://u@h/db', CORS_ORIGINS: 'https://a.example, https://b.example', PUBLIC_URL: 'https://hive.example/' });
    expect(config).toMatchObject({ port: 9000, databaseUrl: 'postgres://u@h/db', corsOrigins: ['https://a.example', 'https://b.example'], publicUrl: 'https://hive.example' });
  });

  it('reads the live gateway timings, with defaults', () => {
    expect(loadConfig({}).live).toMatchObject({ deviceOnlineSeconds: 120, keepaliveTimeoutSeconds: 90, stopGraceSeconds: 20, commandRedeliverySeconds: 10 });
    expect(loadConfig({ LIVE_KEEPALIVE_TIMEOUT_SECONDS: '1.5', DEVICE_ONLINE_SECONDS: '30' }).live).toMatchObject({ keepaliveTimeoutSeconds: 1.5, deviceOnlineSeconds: 30 });
    expect(() => loadConfig({ LIVE_KEEPALIVE_TIMEOUT_SECONDS: '0' })).toThrow('LIVE_KEEPALIVE_TIMEOUT_SECONDS must be >= 1');
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT must be an integer'],
    [{ PORT: '70000' }, 'PORT must be <= 65535'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL has an invalid format'],
    [{ JWT_SECRET: 'short' }, 'JWT_SECRET must be at least 32 characters long'],
    [{ STORAGE: 's3', S3_BUCKET: 'bees' }, 'S3_ACCESS_KEY_ID is required when STORAGE is s3'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of "fatal", "error"'],
  ])('names the variable in error %#', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
