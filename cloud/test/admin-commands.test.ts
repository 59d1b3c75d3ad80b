import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand, USAGE } from '../src/admin/commands.ts';
import { buildTestApp, type TestApp } from './helper.ts';

let t: TestApp;
let ownerId: number;
beforeAll(async () => {
  t = await buildTestApp();
  ownerId = (await t.app.ctx.users.create('maya')).id;
});
afterAll(() => t.close());

const run = (...argv: string[]) => runAdminCommand(argv, t.app.ctx);

describe('admin commands', () => {
  // `user password maya --password-from-stdin=PW` was taken, leaving the password in ps and the shell history.
  it('takes no password on the command line, in any form', async () => {
    for (const args of [['--password-from-stdin=a long enough password'], ['--password-from-stdin', 'a long enough password'], ['--password=x']]) {
      const result = await run('user', 'password', 'maya', ...args);
      expect(result).toMatchObject({ exitCode: 2, stdout: '' });
      expect(result.stderr).toMatch(/^user password takes no options and no password on the command line \(ps and the shell history would show it\): type or pipe it in\n/);
    }
    expect(await t.app.ctx.users.findByLogin('maya')).toMatchObject({ passwordHash: null }); // none of them set it
    expect(await runAdminCommand(['user', 'password', 'maya'], t.app.ctx, { password: 'a long enough password' })).toMatchObject({ exitCode: 0, stdout: 'password set for maya: they can sign in to the web app\n' });
  });

  // --box not-a-box issued a token for a box that does not exist, with nothing said.
  it('issues a token for a box not seen yet, warning on stderr that it acts once the box reports', async () => {
    await t.app.ctx.db.query(`INSERT INTO boxes (owner_id, box_id) VALUES ($1, 'gate-1')`, [ownerId]);
    const unseen = await run('token', 'create', '--user', 'maya', '--box', 'gate-1', '--box', 'not-a-box');
    expect(unseen).toMatchObject({ exitCode: 0, stdout: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+\n$/) });
    expect(unseen.stderr).toBe('warning: maya has no box "not-a-box" yet; the token acts for it once it reports (check the spelling)\n');
    const device = await run('token', 'create', '--user', 'maya', '--box', 'gate-1');
    expect(device).toMatchObject({ exitCode: 0, stderr: '' });
    // A token for some boxes took every scope by default, control of the account included.
    expect(await t.app.ctx.tokens.verify(device.stdout.trim())).toMatchObject({ scopes: ['ingest', 'device'], boxIds: ['gate-1'] });
  });

  // A device maker made tokens in a fresh cloud/.data the service never read: the help did not say where it must run.
  // Without --box a token got every scope ("*"): a script's token could mint tokens.
  it('issues a device token (ingest and device) unless asked for other scopes, with or without --box', async () => {
    const plain = await run('token', 'create', '--user', 'maya');
    expect(plain.exitCode).toBe(0);
    expect(await t.app.ctx.tokens.verify(plain.stdout.trim())).toMatchObject({ scopes: ['ingest', 'device'], boxIds: null });
    const full = await run('token', 'create', '--user', 'maya', '--scope', '*');
    expect(await t.app.ctx.tokens.verify(full.stdout.trim())).toMatchObject({ scopes: ['*'], boxIds: null });
    expect(USAGE).toContain('default ingest and device');
  });

  // --box took a 300-character box id that movement ingest refuses.
  it('refuses a --box that is not a box id, naming it', async () => {
    const result = await run('token', 'create', '--user', 'maya', '--box', 'gate-1', '--box', 'x'.repeat(129));
    expect(result).toMatchObject({ exitCode: 2, stdout: '' });
    expect(result.stderr).toMatch(new RegExp(`^--box\\[1\\] "${'x'.repeat(40)}…" is not a box id: it must be at most 128 characters long\n`));
  });

  it("says in its help that it must run with the service's DATA_DIR, DATABASE_URL and JWT_SECRET", () => {
    expect(USAGE).toContain('Run it with the same DATA_DIR, DATABASE_URL and JWT_SECRET as the service');
  });
});
