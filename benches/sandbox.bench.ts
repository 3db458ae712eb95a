/**
 * Sandbox start-up overhead (issue #4): `/bin/true` under bubblewrap against
 * a bare spawn of `/bin/true` through the same runner, measured in one run.
 * Aim: median bwrap overhead < 15 ms. The full `runSandboxed` path (env
 * sanitizer, prlimit, pids cgroup, bubblewrap) is reported as well.
 *
 * Hardening (descriptor-closing launcher + seccomp filter): the previous
 * profile — bwrap without a filter, spawned straight from node:child_process
 * with no launcher, as the runner did before — against today's runner path
 * (launcher, seccomp program on fd 3), in the same run.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  bubblewrapArgv,
  mintSandboxExecCap,
  runSandboxed,
  runTrustedHostCommand,
  seccompProgram,
} from '@crustcore/sandbox';
// Internal entry point: the only way to hand bwrap its seccomp descriptor outside runSandboxed.
import { runProcess } from '../packages/sandbox/src/runner/process-runner.js';
import { ratio, report, runCases } from './harness.js';

const worktree = mkdtempSync(join(tmpdir(), 'crustcore-bench-sandbox-'));
const env = { PATH: '/usr/bin:/bin' };
const bounds = { cwd: worktree, env, timeoutMs: 30_000, maxOutputBytes: 65_536 } as const;
const bwrapTrue = bubblewrapArgv({
  bwrapPath: '/usr/bin/bwrap',
  worktreeRoot: worktree,
  cwd: worktree,
  network: 'none',
  extraBinds: [],
  command: ['/bin/true'],
}) as [string, ...string[]];
const bwrapSeccompTrue = bubblewrapArgv({
  bwrapPath: '/usr/bin/bwrap',
  worktreeRoot: worktree,
  cwd: worktree,
  network: 'none',
  extraBinds: [],
  command: ['/bin/true'],
  seccompFd: 3,
}) as [string, ...string[]];
const minted = mintSandboxExecCap('verify');
if (minted._tag === 'Left') throw new Error(minted.left.message);
const cap = minted.right;

/** The runner before the hardening: a detached spawn with piped stdio, drained, no launcher. */
function previousSpawn(argv: readonly [string, ...string[]]): Promise<void> {
  return new Promise((resolve, reject) => {
    const [file, ...args] = argv;
    const child = spawn(file, args, {
      cwd: worktree,
      env: { ...env },
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdout.resume();
    child.stderr.resume();
    child.stdin.end();
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
  });
}

async function expectOk(promise: Promise<{ exitCode: number | null }>): Promise<void> {
  const result = await promise;
  if (result.exitCode !== 0) throw new Error(`run failed: ${JSON.stringify(result)}`);
}

try {
  const rows = await runCases(
    'sandbox start-up: /bin/true',
    [
      {
        name: 'bare spawn /bin/true (baseline)',
        fn: () => expectOk(runTrustedHostCommand({ ...bounds, argv: ['/bin/true'] })),
      },
      { name: 'bwrap /bin/true', fn: () => expectOk(runTrustedHostCommand({ ...bounds, argv: bwrapTrue })) },
      {
        name: 'runSandboxed verify /bin/true',
        fn: async () => {
          const result = await runSandboxed(cap, { argv: ['/bin/true'], worktreeRoot: worktree, cwd: worktree });
          if (result._tag === 'Left' || result.right.exitCode !== 0)
            throw new Error(`run failed: ${JSON.stringify(result)}`);
        },
      },
    ],
    4_000,
  );
  const [bare, bwrap, full] = rows as [(typeof rows)[0], (typeof rows)[0], (typeof rows)[0]];
  ratio('bwrap / bare', bwrap, bare);
  ratio('runSandboxed / bare', full, bare);

  const hardening = await runCases(
    'hardening: launcher + seccomp vs the previous profile, /bin/true',
    [
      { name: 'previous: spawn /bin/true, no launcher (baseline)', fn: () => previousSpawn(['/bin/true']) },
      { name: 'previous: spawn bwrap /bin/true, no launcher, no filter', fn: () => previousSpawn(bwrapTrue) },
      {
        name: 'now: runner /bin/true (launcher)',
        fn: () => expectOk(runTrustedHostCommand({ ...bounds, argv: ['/bin/true'] })),
      },
      {
        name: 'now: runner bwrap --seccomp /bin/true (launcher + filter)',
        fn: () => expectOk(runProcess({ ...bounds, argv: bwrapSeccompTrue }, { descriptor3Input: seccompProgram() })),
      },
    ],
    4_000,
  );
  const [oldBare, oldBwrap, newBare, newBwrap] = hardening as [
    (typeof rows)[0],
    (typeof rows)[0],
    (typeof rows)[0],
    (typeof rows)[0],
  ];
  ratio('launcher: runner /bin/true / previous spawn /bin/true', newBare, oldBare);
  ratio('hardened bwrap (launcher + seccomp) / previous bwrap', newBwrap, oldBwrap);
  report(
    'hardening cost on a bwrap start',
    `${(newBwrap.p50Ms - oldBwrap.p50Ms).toFixed(2)} ms (previous p50 ${oldBwrap.p50Ms.toFixed(2)} ms, now ${newBwrap.p50Ms.toFixed(2)} ms)`,
  );
  report(
    'median bwrap overhead',
    `${(bwrap.p50Ms - bare.p50Ms).toFixed(2)} ms (bare p50 ${bare.p50Ms.toFixed(2)} ms, bwrap p50 ${bwrap.p50Ms.toFixed(2)} ms)`,
    '< 15 ms',
  );
  report(
    'median runSandboxed overhead',
    `${(full.p50Ms - bare.p50Ms).toFixed(2)} ms (p50 ${full.p50Ms.toFixed(2)} ms)`,
  );
} finally {
  rmSync(worktree, { recursive: true, force: true });
}
