/**
 * The descriptor-closing launcher every child starts as: it must be
 * invisible to the program (exact environment, argv[0] as given, stderr
 * intact) and a program that cannot start must still be a typed start error.
 * The attack itself (descriptors of every kind reaching sandboxes) is in
 * redteam/sandbox-descriptors.test.ts.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runTrustedHostCommand } from '../src/index.js';
import { resolveProgram } from '../src/runner/resolve-program.js';

const base = { cwd: '/tmp', timeoutMs: 20_000, maxOutputBytes: 1 << 20 } as const;
const scratch = mkdtempSync(join(tmpdir(), 'crustcore-launcher-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('descriptor-closing launcher', () => {
  it('passes the environment on byte for byte, even variables that steer perl, bash or locales', async () => {
    const env: Record<string, string> = {
      PATH: '/usr/bin:/bin',
      PERL5OPT: '-Mstrict -e die',
      PERL5LIB: '/nonexistent',
      PERLLIB: '/nonexistent',
      PERL5DB: 'die',
      LC_ALL: 'xx_NOT.A-LOCALE',
      'BASH_FUNC_f%%': '() { echo hi; }',
      'odd name-with.chars': 'v a l u e',
      SHLVL: '41',
      _: 'underscore',
      EMPTY: '',
    };
    const r = await runTrustedHostCommand({ ...base, env, argv: ['/usr/bin/env', '-0'] });
    expect(r.stderr.text).toBe('');
    expect(r.exitCode).toBe(0);
    const seen = r.stdout.text.split('\u0000').filter((entry) => entry !== '');
    expect(seen).toEqual(Object.entries(env).map(([name, value]) => `${name}=${value}`));
  });

  it('keeps argv[0] as given and resolves a bare name on the child PATH', async () => {
    const absolute = await runTrustedHostCommand({ ...base, env: {}, argv: ['/bin/cat', '/proc/self/cmdline'] });
    expect(absolute.stdout.text).toBe('/bin/cat\u0000/proc/self/cmdline\u0000');
    const bare = await runTrustedHostCommand({ ...base, env: { PATH: '/bin' }, argv: ['cat', '/proc/self/cmdline'] });
    expect(bare.stdout.text).toBe('cat\u0000/proc/self/cmdline\u0000');
  });

  it('reports a non-executable program as PermissionDenied and a directory likewise', async () => {
    const file = join(scratch, 'not-executable');
    writeFileSync(file, '#!/bin/sh\necho no\n');
    chmodSync(file, 0o644);
    const r = await runTrustedHostCommand({ ...base, env: {}, argv: [file] });
    expect(r.startError).toMatchObject({ reason: 'PermissionDenied', code: 'EACCES' });
    expect(resolveProgram('/tmp', undefined, '/')).toEqual({ _tag: 'Missing', code: 'EACCES' });
    expect(resolveProgram('sh', '/nonexistent::/bin', '/')).toEqual({ _tag: 'Found', path: '/bin/sh' });
    expect(resolveProgram('./x', undefined, '/nonexistent')).toEqual({ _tag: 'Missing', code: 'ENOENT' });
  });

  it('leaves the child only descriptors 0, 1 and 2', async () => {
    const r = await runTrustedHostCommand({ ...base, env: {}, argv: ['/bin/ls', '/proc/self/fd'] });
    // ls's own directory descriptor for the listing is the one extra entry.
    const listed = r.stdout.text.split('\n').filter((n) => n !== '');
    expect(listed.slice(0, 3)).toEqual(['0', '1', '2']);
    expect(listed.length).toBeLessThanOrEqual(4);
  });
});
