/**
 * Golden: a task always stops when told to. `--timeout` under constant
 * garbage collection (Node 20 lost an `AbortSignal.timeout` inside
 * `AbortSignal.any` after GC, and a `--timeout 10` run went 600 s), and a
 * SIGTERM to the CLI. Asserted by handshake: the worker writes a marker once
 * it runs; the task then ends with 130, the worker's processes are gone and
 * `inspect` tells the task was killed. No assertion reads a clock.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCli, crustcore, makeRepo, NODE_REPO } from './cli-harness.js';
import { fileAppears, processesWith, startCli, writeFile } from './honest-harness.js';

beforeAll(() => buildCli(), 120_000);

/** Preloaded into the CLI: collects garbage every few milliseconds for the whole run. */
function gcPreload(root: string): string {
  return writeFile(join(root, 'gc-loop.mjs'), 'setInterval(() => globalThis.gc(), 5).unref();\n');
}

/** A worker that says it started, then sleeps far longer than any test (a unique argument names it). */
function sleeper(root: string, token: string): string {
  return writeFile(join(root, 'sleeper.sh'), `#!/bin/sh\necho started > started.marker\nexec sleep ${token}\n`, true);
}

const uniqueSleep = (): string => `6${randomBytes(3).readUIntBE(0, 3) % 1000}.${randomBytes(1)[0] ?? 7}`;

describe('golden: stopping', () => {
  it('CONTROL: under this GC pressure AbortSignal.any(AbortSignal.timeout()) never fires', () => {
    const box = makeRepo({ 'x.txt': 'x\n' });
    const preload = gcPreload(box.root);
    // The plain timer (held) fires after the signal's; if the signal's timer were alive it would come first.
    const script =
      "const s = AbortSignal.any([new AbortController().signal, AbortSignal.timeout(50)]); s.addEventListener('abort', () => { console.log('fired'); process.exit(0); }); setTimeout(() => { console.log('lost'); process.exit(0); }, 1500);";
    const result = spawnSync(process.execPath, ['--expose-gc', '--import', preload, '-e', script], {
      encoding: 'utf8',
    });
    expect(result.stdout.trim()).toBe('lost');
  });

  it('--timeout stops a sleeping worker while garbage is collected constantly: exit 130, worker gone, inspect says killed', async () => {
    const box = makeRepo(NODE_REPO);
    const token = uniqueSleep();
    const cli = startCli(
      box,
      ['run', '--goal', 'slow', '--worker', sleeper(box.root, token), '--approve', 'auto', '--timeout', '15', '--json'],
      ['--expose-gc', '--import', gcPreload(box.root)],
    );
    // Only the timer can end this run (the worker sleeps for hours); on a slow machine it may even
    // fire before the worker starts, which proves the same thing, so the marker is not awaited.
    const result = await cli.exited;
    expect(result.status, result.stdout + result.stderr).toBe(130);
    const json = JSON.parse(result.stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
    expect(String(json.reason)).toContain('--timeout');
    expect(processesWith(`sleep ${token}`)).toEqual([]);
    const inspect = crustcore(box, ['inspect', '--dir', String(json.stateDir), '--task', String(json.taskId)]);
    expect(inspect.stdout).toMatch(/killed/);
    expect(inspect.stdout).not.toMatch(/\bopen\b/);
  }, 180_000);

  it('SIGTERM to the CLI stops the task the same way (killed in the log, not open)', async () => {
    const box = makeRepo(NODE_REPO);
    const token = uniqueSleep();
    const cli = startCli(box, [
      'run',
      '--goal',
      'slow',
      '--worker',
      sleeper(box.root, token),
      '--approve',
      'auto',
      '--json',
    ]);
    // The worker's worktree is a slot of the workers' warm pool.
    await fileAppears(join(box.home, 'pool'), 'started.marker', cli);
    cli.child.kill('SIGTERM');
    const result = await cli.exited;
    expect(result.status, result.stdout + result.stderr).toBe(130);
    const json = JSON.parse(result.stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
    expect(String(json.reason)).toContain('SIGTERM');
    expect(processesWith(`sleep ${token}`)).toEqual([]);
    const inspect = crustcore(box, ['inspect', '--dir', String(json.stateDir), '--task', String(json.taskId)]);
    expect(inspect.stdout).toMatch(/killed/);
  }, 180_000);
});
