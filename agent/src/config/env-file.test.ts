import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEnvFile, readEnvFile } from './env-file.ts';

describe('env file', () => {
  it('reads NAME=value lines as systemd does, skipping blanks and comments, unquoting values', () => {
    const text = ['# written by install.sh', '', 'HIVEGATE_TOKEN=abc.def', 'export HIVEGATE_CLOUD_URL="https://hives.example"', "EMPTY=''", '  SPACED = x y  ', ''].join('\n');
    expect(parseEnvFile(text, 'agent.env')).toEqual({ HIVEGATE_TOKEN: 'abc.def', HIVEGATE_CLOUD_URL: 'https://hives.example', EMPTY: '', SPACED: 'x y' });
  });

  it('names the file and line of a line that is no assignment, and a file it cannot read', () => {
    expect(() => parseEnvFile('A=1\nHIVEGATE_TOKEN abc\n', '/etc/hivegate/agent.env')).toThrow('/etc/hivegate/agent.env line 2: expected NAME=value, got "HIVEGATE_TOKEN abc"');
    const dir = mkdtempSync(join(tmpdir(), 'hivegate-env-'));
    try {
      expect(() => readEnvFile(join(dir, 'missing.env'))).toThrow(`--secrets-file ${join(dir, 'missing.env')} cannot be read (ENOENT)`);
      writeFileSync(join(dir, 'agent.env'), 'HIVEGATE_TOKEN=t\n');
      expect(readEnvFile(join(dir, 'agent.env'))).toEqual({ HIVEGATE_TOKEN: 't' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
