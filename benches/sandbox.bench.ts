/**
 * Sandbox start-up overhead (issue #4): `/bin/true` under bubblewrap against
 * a bare spawn of `/bin/true` through the same runner, measured in one run.
 * Aim: median bwrap overhead < 15 ms. The full `runSandboxed` path (env
 * sanitizer, prlimit, pids cgroup, bubblewrap) is reported as well.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bubblewrapArgv, mintSandboxExecCap, runSandboxed, runTrustedHostCommand } from '@crustcore/sandbox';
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
const minted = mintSandboxExecCap('verify');
if (minted._tag === 'Left') throw new Error(minted.left.message);
const cap = minted.right;

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
