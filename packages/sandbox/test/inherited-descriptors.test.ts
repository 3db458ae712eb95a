/**
 * The runner's choice between the descriptor-closing launcher and a direct
 * spawn, driven for real: a python3 holder leaves a directory descriptor
 * open without close-on-exec (as a shell's `exec 7</` would) and execs a
 * Node driver. The driver
 * - sees that descriptor as inheritable (and whatever the test runner left; its own `fs.openSync`
 *   descriptor is close-on-exec and never listed);
 * - runs the same children with the descriptor open (through the launcher)
 *   and after `closeInheritedDescriptors` (spawned directly): what each child
 *   sees — its argv, its exact environment, its open descriptors, its
 *   stderr — is the same both times, and the planted descriptor reaches
 *   neither. CONTROL: a plain fork+exec from the holder does see it.
 * The attack with every kind of descriptor is redteam/sandbox-descriptors.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const scratch = mkdtempSync(join(tmpdir(), 'crustcore-inherited-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const source = resolve(import.meta.dirname, '../src');
// High enough that nothing at Node's start-up reuses or re-flags it (low numbers are taken by libuv).
const PLANTED = 300;

const HOLDER = `
import os, subprocess, sys
fd = os.open('/', os.O_RDONLY | os.O_DIRECTORY)
os.dup2(fd, ${PLANTED}, inheritable=True)
os.close(fd)
seen = subprocess.run(['/bin/ls', '/proc/self/fd'], close_fds=False, capture_output=True, text=True).stdout.split()
print('CONTROL ' + ' '.join(seen), flush=True)
os.execv(sys.argv[1], sys.argv[1:])
`;

const DRIVER = `
import { openSync } from 'node:fs';
const d = await import(${JSON.stringify(join(source, 'descriptors.ts'))});
const sandbox = await import(${JSON.stringify(join(source, 'index.ts'))});
const own = openSync('/etc/hostname', 'r');
const env = { PATH: '/usr/bin:/bin', PERL5OPT: '-e die', SHLVL: '41', 'odd name': 'v a l' };
const children = async () => {
  const run = (argv) => sandbox.runTrustedHostCommand({ argv, env, cwd: '/tmp', timeoutMs: 20000, maxOutputBytes: 1 << 20 });
  const fds = await run(['/bin/ls', '/proc/self/fd']);
  const cmdline = await run(['cat', '/proc/self/cmdline']);
  const seenEnv = await run(['/usr/bin/env', '-0']);
  const stderr = await run(['/bin/sh', '-c', 'echo to-stderr >&2; exit 3']);
  return { fds: fds.stdout.text.split(/\\s+/).filter(Boolean), cmdline: cmdline.stdout.text, env: seenEnv.stdout.text,
    stderr: stderr.stderr.text, exit: stderr.exitCode };
};
const before = { inheritable: d.inheritableDescriptors(), ...(await children()) };
const closed = d.closeInheritedDescriptors();
const after = { inheritable: d.inheritableDescriptors(), ...(await children()) };
console.log('DRIVER ' + JSON.stringify({ own, before, closed, after }));
`;

describe('inherited descriptors: launcher or direct spawn', () => {
  it('lists only what an exec would hand on, and the children see the same either way', () => {
    const holder = join(scratch, 'holder.py');
    writeFileSync(holder, HOLDER);
    const out = execFileSync(
      '/usr/bin/python3',
      [holder, process.execPath, '--conditions=source', '--import', 'tsx', '--input-type=module', '-e', DRIVER],
      { cwd: resolve(import.meta.dirname, '..'), encoding: 'utf8', env: { PATH: '/usr/bin:/bin', HOME: scratch } },
    );
    const line = (tag: string): string =>
      out
        .split('\n')
        .find((l) => l.startsWith(`${tag} `))
        ?.slice(tag.length + 1) ?? '';
    // CONTROL: the descriptor is really open and inheritable in the holder's children.
    expect(line('CONTROL').split(' ')).toContain(String(PLANTED));
    const report = JSON.parse(line('DRIVER')) as {
      own: number;
      closed: number[];
      before: Record<string, unknown> & { inheritable: number[]; fds: string[] };
      after: Record<string, unknown> & { inheritable: number[]; fds: string[] };
    };
    expect(report.before.inheritable).toContain(PLANTED);
    expect(report.before.inheritable).not.toContain(report.own);
    expect(report.closed).toEqual(report.before.inheritable);
    expect(report.after.inheritable).toEqual([]);
    // Neither way lets the planted descriptor (or the driver's own) through: 0-2 and ls's own listing.
    for (const fds of [report.before.fds, report.after.fds]) expect(fds).toEqual(['0', '1', '2', '3']);
    const { inheritable: _b, ...before } = report.before;
    const { inheritable: _a, ...after } = report.after;
    expect(after).toEqual(before);
    expect(before.cmdline).toBe('cat\u0000/proc/self/cmdline\u0000');
    expect(before.stderr).toBe('to-stderr\n');
    expect(before.exit).toBe(3);
    expect(String(before.env).split('\u0000').filter(Boolean)).toEqual([
      'PATH=/usr/bin:/bin',
      'PERL5OPT=-e die',
      'SHLVL=41',
      'odd name=v a l',
    ]);
  });
});
