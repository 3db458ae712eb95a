/**
 * `crustcore secret`: values come from a hidden prompt or stdin, never argv;
 * `list` shows handles and availability, never values; the key file is
 * created 0600; a wrong passphrase opens nothing. The command runs in-process
 * with an Io whose streams the test controls (a fake TTY for the prompt).
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UsageError } from '../packages/crustcore/src/cli/command.js';
import { ExitCode } from '../packages/crustcore/src/cli/exit-codes.js';
import { type Io, makeStyle } from '../packages/crustcore/src/cli/output.js';
import { secretCommand } from '../packages/crustcore/src/commands/secret.js';

const VALUE = 'cli-secret-value-4f9a2c7e1b';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'crustcore-secret-cli-'));
});
afterEach(() => {
  rmSync(home, { recursive: true, force: true });
});

interface Captured {
  readonly io: Io;
  readonly stdout: () => string;
  readonly stderr: () => string;
}

function capture(stdin: NodeJS.ReadableStream & { isTTY?: boolean }, env: NodeJS.ProcessEnv): Captured {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  stderr.on('data', (c: Buffer) => {
    err += c.toString();
  });
  return {
    io: { stdout, stderr, stdin, env, cwd: home, out: makeStyle(stdout, env), err: makeStyle(stderr, env) },
    stdout: () => out,
    stderr: () => err,
  };
}

const keyFileEnv = (): NodeJS.ProcessEnv => ({
  CRUSTCORE_HOME: home,
  CRUSTCORE_VAULT_KEYFILE: join(home, 'vault.key'),
});

/** A terminal stand-in: raw mode is recorded, typed bytes are fed after each prompt appears. */
class FakeTty extends PassThrough {
  readonly isTTY = true;
  rawModes: boolean[] = [];
  setRawMode(mode: boolean): this {
    this.rawModes.push(mode);
    return this;
  }
}

describe('crustcore secret', () => {
  it('set reads the value from piped stdin; list shows handles only; rm removes', async () => {
    const set = capture(Readable.from([`${VALUE}\n`]), keyFileEnv());
    expect(await secretCommand.run(['set', 'DEPLOY_TOKEN', '--label', 'deploy'], set.io)).toBe(ExitCode.ok);
    expect(set.stdout()).toContain('stored secret://DEPLOY_TOKEN (deploy)');
    expect(statSync(join(home, 'vault.key')).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, 'vault')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(home, 'vault')).includes(VALUE)).toBe(false);

    const list = capture(Readable.from([]), keyFileEnv());
    expect(await secretCommand.run(['list', '--json'], list.io)).toBe(ExitCode.ok);
    const listed = JSON.parse(list.stdout());
    expect(listed.secrets).toEqual([
      { uri: 'secret://DEPLOY_TOKEN', label: 'deploy', status: 'available', updatedAt: expect.any(String) },
    ]);
    expect(list.stdout() + list.stderr()).not.toContain(VALUE);

    const human = capture(Readable.from([]), keyFileEnv());
    expect(await secretCommand.run(['list'], human.io)).toBe(ExitCode.ok);
    expect(human.stdout()).toMatch(/secret:\/\/DEPLOY_TOKEN {2}available {2}deploy/);

    const rm = capture(Readable.from([]), keyFileEnv());
    expect(await secretCommand.run(['rm', 'DEPLOY_TOKEN'], rm.io)).toBe(ExitCode.ok);
    const again = capture(Readable.from([]), keyFileEnv());
    expect(await secretCommand.run(['rm', 'DEPLOY_TOKEN'], again.io)).toBe(ExitCode.usage);
  });

  it('never takes a value from argv, and never echoes one back', async () => {
    for (const args of [
      ['set', 'DEPLOY_TOKEN', VALUE],
      ['set', 'DEPLOY_TOKEN', `--value=${VALUE}`],
      ['set', `--value=${VALUE}`, 'DEPLOY_TOKEN'],
      ['set', 'DEPLOY_TOKEN', '-v', VALUE],
    ]) {
      const run = capture(Readable.from([]), keyFileEnv());
      const failure = await secretCommand.run(args, run.io).then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure, args.join(' ')).toBeInstanceOf(UsageError);
      expect((failure as Error).message).not.toContain(VALUE);
      expect(run.stdout() + run.stderr()).not.toContain(VALUE);
    }
    const invalid = capture(Readable.from([]), keyFileEnv());
    await expect(secretCommand.run(['set', VALUE.replace(/-/g, '$')], invalid.io)).rejects.toThrow(UsageError);
  });

  it('prompts without echo on a terminal: passphrase twice for a new vault, then the value', async () => {
    const tty = new FakeTty();
    const env = { CRUSTCORE_HOME: home };
    const run = capture(tty, env);
    const typed = ['pass phrase 1\r', 'pass phrase 1\r', `${VALUE}\r`];
    const prompts: string[] = [];
    (run.io.stderr as PassThrough).on('data', (c: Buffer) => {
      const text = c.toString();
      if (text.includes('(input hidden)') || text.includes('Repeat')) {
        prompts.push(text);
        setImmediate(() => tty.write(typed.shift() ?? ''));
      }
    });
    expect(await secretCommand.run(['set', 'TTY_TOKEN'], run.io)).toBe(ExitCode.ok);
    expect(prompts).toHaveLength(3);
    expect(run.stderr()).not.toContain('pass phrase 1');
    expect(run.stderr() + run.stdout()).not.toContain(VALUE);
    expect(tty.rawModes.filter((m) => m)).toHaveLength(3);
    expect(tty.rawModes.at(-1)).toBe(false);

    // Typed ahead in one chunk (a paste) works too; a wrong passphrase opens nothing.
    const wrongTty = new FakeTty();
    const wrong = capture(wrongTty, env);
    setImmediate(() => wrongTty.write('not the passphrase\r'));
    expect(await secretCommand.run(['list'], wrong.io)).toBe(ExitCode.usage);
    expect(wrong.stderr()).toContain('the key does not open this vault');
    const pasteTty = new FakeTty();
    const paste = capture(pasteTty, env);
    setImmediate(() => pasteTty.write('pass phrase 1\r\nsecond-value-123456\r'));
    expect(await secretCommand.run(['set', 'PASTED_TOKEN'], paste.io)).toBe(ExitCode.ok);
    const rightTty = new FakeTty();
    const right = capture(rightTty, env);
    setImmediate(() => rightTty.write('pass phrase 1\r'));
    expect(await secretCommand.run(['list', '--json'], right.io)).toBe(ExitCode.ok);
    expect(JSON.parse(right.stdout()).secrets.map((s: { uri: string }) => s.uri)).toEqual([
      'secret://TTY_TOKEN',
      'secret://PASTED_TOKEN',
    ]);
  });

  it('without a key file and without a terminal, says how to provide a key', async () => {
    const run = capture(Readable.from([VALUE]), { CRUSTCORE_HOME: home });
    expect(await secretCommand.run(['set', 'X_TOKEN'], run.io)).toBe(ExitCode.usage);
    expect(run.stderr()).toContain('CRUSTCORE_VAULT_KEYFILE');
    expect(run.stderr()).not.toContain(VALUE);
  });

  it('refuses a key file other users can read', async () => {
    const first = capture(Readable.from([VALUE]), keyFileEnv());
    expect(await secretCommand.run(['set', 'A_TOKEN'], first.io)).toBe(ExitCode.ok);
    const { chmodSync } = await import('node:fs');
    chmodSync(join(home, 'vault.key'), 0o644);
    const loose = capture(Readable.from([]), keyFileEnv());
    expect(await secretCommand.run(['list'], loose.io)).toBe(ExitCode.usage);
    expect(loose.stderr()).toContain('has mode 0644; run chmod 600');
  });
});
