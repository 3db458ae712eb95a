/**
 * Inherited descriptors. Whatever starts CrustCore (a shell's `exec 200</`,
 * an editor, a CI runner, a parent's pipes) can leave descriptors open
 * without O_CLOEXEC; Node does not close them in its children and bubblewrap
 * hands them on, and one open directory descriptor is the whole host
 * filesystem (`openat(fd, "etc/shadow")`).
 *
 * A python3 "holder" plays that parent: it opens descriptors of every kind
 * (directories, regular files for reading and for writing, both ends of a
 * pipe, a socketpair, a listening TCP socket, an eventfd, an epoll, a memfd)
 * at many numbers (3, 4, 9, 10, 63, 200, 1000+, and the last number its
 * limit allows), then execs a Node driver that runs one probe through
 * `runSandboxed` for every profile and backend, and through
 * `runTrustedHostCommand`. The probe lists /proc/self/fd and tries to read,
 * write, fstat and openat through every planted number and through
 * /proc/self/fd/N. CONTROLS, from the same holder with the same
 * descriptors: a plain fork+exec of the probe, and the probe under bubblewrap
 * started directly; both must see (and use) the descriptors.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runTrustedHostCommand } from '@crustcore/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, CLI, makeRepo } from '../golden/cli-harness.js';
import { expectNoneReached, HOLDER, PROBE, parseProbe, shellQuote } from './descriptor-harness.js';

const repoRoot = resolve(import.meta.dirname, '..');
const scratch = mkdtempSync(join(tmpdir(), 'crustcore-redteam-fds-'));
const worktree = mkdtempSync(join(tmpdir(), 'crustcore-redteam-fds-worktree-'));
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
  rmSync(worktree, { recursive: true, force: true });
});

const SECRET = `host-secret-${process.pid}`;
const secretFile = join(scratch, 'secret.txt');
const victimFile = join(scratch, 'victim.txt');
writeFileSync(secretFile, SECRET);
writeFileSync(victimFile, 'untouched');

/** In the holder's exec'd Node process: one probe per profile and backend, and one host-side command. */
const DRIVER = `
const sandbox = await import(${JSON.stringify(join(repoRoot, 'packages/sandbox/src/index.ts'))});
const numbers = process.env.CRUSTCORE_PLANTED;
const probe = ${JSON.stringify(join(worktree, 'probe.py'))};
const worktree = ${JSON.stringify(worktree)};
const fs = await import('node:fs');
const stillOpen = numbers.split(',').filter((n) => { try { fs.fstatSync(Number(n)); return true; } catch { return false; } });
console.log('DRIVER ' + JSON.stringify({ stillOpen }));
const argv = ['/usr/bin/python3', probe, numbers];
for (const profile of sandbox.SANDBOX_PROFILE_NAMES) {
  for (const backend of sandbox.SANDBOX_PROFILES[profile].backends) {
    const cap = sandbox.mintSandboxExecCap(profile, { backend });
    if (cap._tag === 'Left') throw new Error(cap.left.message);
    const r = await sandbox.runSandboxed(cap.right, { argv, worktreeRoot: worktree, cwd: worktree, timeoutMs: 60000 });
    const out = r._tag === 'Left' ? 'REFUSED ' + r.left.message : r.right.stdout.text + r.right.stderr.text;
    console.log('RUN ' + JSON.stringify({ via: profile + '/' + backend, out }));
  }
}
const host = await sandbox.runTrustedHostCommand({ argv, cwd: worktree, env: { PATH: '/usr/bin:/bin' }, timeoutMs: 60000, maxOutputBytes: 1 << 20 });
console.log('RUN ' + JSON.stringify({ via: 'runTrustedHostCommand', out: host.stdout.text + host.stderr.text }));
`;

/** The holder execs this: Node with tsx, so the driver imports the package source. */
const libraryDriver = (): string =>
  `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} --conditions=source --import tsx --input-type=module -e ${shellQuote(DRIVER)}\n`;

async function runHolder(driverScript: string = libraryDriver()): Promise<{ lines: string[]; stderr: string }> {
  writeFileSync(join(worktree, 'probe.py'), PROBE);
  const driverFile = join(scratch, 'driver.sh');
  writeFileSync(driverFile, driverScript, { mode: 0o755 });
  const holderFile = join(scratch, 'holder.py');
  writeFileSync(holderFile, HOLDER);
  const run = await runTrustedHostCommand({
    argv: ['/usr/bin/python3', holderFile, join(worktree, 'probe.py'), secretFile, victimFile, driverFile],
    cwd: repoRoot,
    env: { PATH: '/usr/bin:/bin', HOME: '/root' },
    timeoutMs: 170_000,
    maxOutputBytes: 8 << 20,
  });
  expect(run.exitCode, run.stderr.text).toBe(0);
  return { lines: run.stdout.text.split('\n'), stderr: run.stderr.text };
}

/**
 * The holder execs the built CLI instead: `crustcore run` in a repository whose worker runs the
 * probe and writes its report into the worktree, so the verified, applied patch carries it back.
 */
function cliDriver(repo: string, home: string): string {
  const worker = `sh -c 'python3 probe.py $CRUSTCORE_PLANTED > fd-report.txt'`;
  return [
    '#!/bin/sh',
    `cd ${shellQuote(repo)} || exit 1`,
    `export CRUSTCORE_HOME=${shellQuote(home)} NO_COLOR=1`,
    `exec ${shellQuote(process.execPath)} ${shellQuote(CLI)} run --goal probe --worker "${worker}" --approve auto --json`,
    '',
  ].join('\n');
}

beforeAll(() => buildCli(), 300_000);

describe('redteam: inherited file descriptors', () => {
  it('reach neither a sandbox of any profile nor a host-side command (controls: plain exec and bare bwrap leak)', async () => {
    const { lines, stderr } = await runHolder();
    const tagged = (tag: string) =>
      lines.filter((line) => line.startsWith(`${tag} `)).map((l) => l.slice(tag.length + 1));
    const planted = (JSON.parse(tagged('PLANTED')[0] ?? 'null') as { planted: Record<string, number> } | null)?.planted;
    expect(planted, stderr).toBeDefined();
    const numbers = Object.values(planted ?? {});
    expect(numbers.length).toBe(13);

    // The descriptors did reach the CrustCore process itself (so the runs below are a real test).
    const driver = JSON.parse(tagged('DRIVER')[0] ?? '{}') as { stillOpen?: string[] };
    expect(driver.stillOpen?.map(Number).sort((a, b) => a - b)).toEqual([...numbers].sort((a, b) => a - b));

    // CONTROL 1: a plain fork+exec inherits every one, and can use them.
    const direct = parseProbe(tagged('CONTROL-DIRECT')[0] ?? '');
    for (const n of numbers) expect(direct.open).toContain(n);
    const root = String(planted?.['dir-root']);
    expect(direct.tries[root]?.openat).toMatch(/^OK:/);
    expect(direct.tries[String(planted?.['file-secret'])]?.read).toBe(`OK:${SECRET}`);
    // CONTROL 2: bubblewrap started directly hands them into the sandbox, and `openat` escapes its mounts.
    const bare = parseProbe(tagged('CONTROL-BWRAP')[0] ?? '');
    for (const n of numbers) expect(bare.open).toContain(n);
    expect(bare.tries[root]?.openat).toMatch(/^OK:/);
    expect(bare.tries[String(planted?.['dir-root-near-limit'])]?.procfd).toMatch(/^OK:/);

    const runs = tagged('RUN').map((line) => JSON.parse(line) as { via: string; out: string });
    expect(runs.map((r) => r.via).sort()).toEqual(
      [
        'build/bubblewrap',
        'build/process-jail',
        'hostile/bubblewrap',
        'runTrustedHostCommand',
        'setup/bubblewrap',
        'verify/bubblewrap',
        'verify/process-jail',
        'worker/bubblewrap',
        'worker/process-jail',
      ].sort(),
    );
    for (const run of runs) expectNoneReached(parseProbe(run.out), numbers, run.via);
  }, 180_000);

  it('reach no worker of `crustcore run` (the CLI closes them at start; control: plain exec leaks)', async () => {
    const box = makeRepo({
      'package.json': '{ "name": "fds", "private": true, "type": "module", "scripts": { "test": "node --test" } }\n',
      'test/ok.test.js': "import { test } from 'node:test';\ntest('ok', () => {});\n",
      'probe.py': PROBE,
    });
    try {
      const { lines, stderr } = await runHolder(cliDriver(box.repo, box.home));
      const tagged = (tag: string) =>
        lines.filter((line) => line.startsWith(`${tag} `)).map((l) => l.slice(tag.length + 1));
      const planted = (JSON.parse(tagged('PLANTED')[0] ?? 'null') as { planted: Record<string, number> } | null)
        ?.planted;
      const numbers = Object.values(planted ?? {});
      expect(numbers.length, stderr).toBe(13);
      // CONTROL: the same descriptors reach a plain fork+exec from the same holder.
      const direct = parseProbe(tagged('CONTROL-DIRECT')[0] ?? '');
      for (const n of numbers) expect(direct.open).toContain(n);
      const result = JSON.parse(lines.filter((line) => line.startsWith('{')).pop() ?? '{}') as { outcome?: string };
      expect(result.outcome, lines.join('\n') + stderr).toBe('completed');
      expectNoneReached(
        parseProbe(readFileSync(join(box.repo, 'fd-report.txt'), 'utf8')),
        numbers,
        'crustcore run worker',
      );
    } finally {
      rmSync(box.root, { recursive: true, force: true });
    }
  }, 180_000);
});
