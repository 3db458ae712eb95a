import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  mintSandboxExecCap,
  runSandboxed,
  SANDBOX_HOME,
  type SandboxCapOptions,
  type SandboxExecCap,
  type SandboxedResult,
  type SandboxProfileName,
  type SandboxRunSpec,
} from '../src/index.js';
import { makeWorktree, type TestWorktree } from './worktree.js';

const worktrees: TestWorktree[] = [];
afterEach(() => {
  for (const worktree of worktrees.splice(0)) worktree.remove();
});

function worktree(files: Record<string, string> = {}): TestWorktree {
  const made = makeWorktree(files);
  worktrees.push(made);
  return made;
}

function cap(profile: SandboxProfileName, options: SandboxCapOptions = {}): SandboxExecCap {
  const minted = mintSandboxExecCap(profile, options);
  if (minted._tag === 'Left') throw new Error(minted.left.message);
  return minted.right;
}

async function run(capability: SandboxExecCap, spec: SandboxRunSpec): Promise<SandboxedResult> {
  const result = await runSandboxed(capability, spec);
  if (result._tag === 'Left') throw new Error(`refused: ${result.left.reason}: ${result.left.message}`);
  return result.right;
}

describe('runSandboxed (bubblewrap)', () => {
  it('runs node inside and reports how the run was confined', async () => {
    const wt = worktree();
    const result = await run(cap('verify'), {
      argv: [process.execPath, '--test', '--test-reporter=dot'],
      worktreeRoot: wt.root,
      cwd: wt.root,
      timeoutMs: 30_000,
    });
    expect(result.startError).toBeNull();
    expect(result.exitCode).toBe(0);
    expect(result).toMatchObject({ profile: 'verify', backend: 'bubblewrap', isolation: 'namespaces' });
    expect(['pids-cgroup', 'rlimit-nproc']).toContain(result.processLimit);
  });

  it('runs `npm test` of a sample repo inside the sandbox', async () => {
    const wt = worktree({
      'package.json': JSON.stringify({ name: 'sample', version: '1.0.0', scripts: { test: 'node --test' } }),
      'test/sum.test.js':
        "const { test } = require('node:test');\nconst assert = require('node:assert');\ntest('sum', () => assert.equal(1 + 1, 2));\n",
    });
    const result = await run(cap('verify'), {
      argv: ['npm', 'test'],
      worktreeRoot: wt.root,
      cwd: wt.root,
      timeoutMs: 60_000,
    });
    expect(result.stderr.text).not.toMatch(/ERR!/);
    expect(result.exitCode).toBe(0);
    expect(result.stdout.text).toContain('pass 1');
  });

  it('lets the run write its worktree, HOME and /tmp, and nothing else', async () => {
    const wt = worktree();
    const result = await run(cap('build'), {
      argv: [
        'sh',
        '-c',
        'echo w > out.txt && touch "$HOME/h" /tmp/t && echo ok; touch /usr/x /etc/x /x 2>/dev/null || echo denied',
      ],
      worktreeRoot: wt.root,
      cwd: wt.root,
    });
    expect(result.stdout.text).toBe('ok\ndenied\n');
    expect(readFileSync(`${wt.root}/out.txt`, 'utf8')).toBe('w\n');
  });

  it('reports a missing program as a typed start error', async () => {
    const wt = worktree();
    const result = await run(cap('verify'), {
      argv: ['crustcore-no-such-test-runner'],
      worktreeRoot: wt.root,
      cwd: wt.root,
    });
    expect(result.startError).toMatchObject({ reason: 'NotFound', code: 'ENOENT' });
  });

  it('runs inside its own pids and memory cgroups and removes both after the run', async () => {
    const wt = worktree();
    // The jail has no cgroup namespace, so /proc/self/cgroup shows the real group paths.
    const result = await run(cap('build', { backend: 'process-jail' }), {
      argv: ['cat', '/proc/self/cgroup'],
      worktreeRoot: wt.root,
      cwd: wt.root,
    });
    expect(result.exitCode).toBe(0);
    expect(result.memoryLimit).toBe(result.processLimit === 'pids-cgroup' ? 'memory-cgroup' : 'rlimit-data');
    for (const [controller, used] of [
      ['pids', result.processLimit === 'pids-cgroup'],
      ['memory', result.memoryLimit === 'memory-cgroup'],
    ] as const) {
      if (!used) continue;
      // Inside: the run's own group, whose name starts with this process's pid.
      expect(result.stdout.text).toMatch(new RegExp(`:${controller}:/crustcore/${process.pid}-[0-9a-f]+\\n`));
      const parent = `/sys/fs/cgroup/${controller}/crustcore`;
      const mine = existsSync(parent) ? readdirSync(parent).filter((name) => name.startsWith(`${process.pid}-`)) : [];
      expect(mine).toEqual([]);
    }
  });

  it('times out and cancels, killing the tree', async () => {
    const wt = worktree();
    const timed = await run(cap('verify'), {
      argv: ['sleep', '600'],
      worktreeRoot: wt.root,
      cwd: wt.root,
      timeoutMs: 300,
    });
    expect(timed.timedOut).toBe(true);
    expect(timed.exitCode).toBeNull();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const cancelled = await run(cap('verify'), {
      argv: ['sleep', '600'],
      worktreeRoot: wt.root,
      cwd: wt.root,
      signal: controller.signal,
    });
    expect(cancelled.cancelled).toBe(true);
  });
});

describe('runSandboxed (worker extra binds)', () => {
  it('reaches a model-proxy Unix socket and a throwaway HOME, with the network still off', async () => {
    const wt = worktree();
    const outside = worktree();
    const proxyDirectory = join(outside.root, 'proxy');
    const home = join(outside.root, 'home');
    mkdirSync(proxyDirectory);
    mkdirSync(home);
    const server = createServer((socket) => socket.end('PROXY-OK\n'));
    await new Promise<void>((listening) => server.listen(join(proxyDirectory, 'model.sock'), listening));
    try {
      const workerCap = cap('worker', {
        extraBinds: [
          { source: proxyDirectory, target: '/run/crustcore', mode: 'read-only' },
          { source: home, target: SANDBOX_HOME, mode: 'read-write' },
        ],
      });
      const script = [
        "require('fs').writeFileSync(process.env.HOME + '/.worker-state', 'kept');",
        "const s = require('net').connect('/run/crustcore/model.sock');",
        "s.on('data', (d) => process.stdout.write(String(d)));",
        "s.on('error', (e) => console.log('ERR', e.code));",
      ].join('');
      const result = await run(workerCap, {
        argv: ['node', '-e', script],
        worktreeRoot: wt.root,
        cwd: wt.root,
        timeoutMs: 30_000,
      });
      expect(result.stdout.text).toBe('PROXY-OK\n');
      expect(readFileSync(join(home, '.worker-state'), 'utf8')).toBe('kept');
      const network = await run(workerCap, { argv: ['cat', '/proc/net/dev'], worktreeRoot: wt.root, cwd: wt.root });
      expect(network.stdout.text).not.toMatch(/eth\d|ens\d/);
    } finally {
      await new Promise((closed) => server.close(closed));
    }
  });
});

describe('runSandboxed refusals', () => {
  it('refuses a shell under verify', async () => {
    const wt = worktree();
    const result = await runSandboxed(cap('verify'), {
      argv: ['sh', '-c', 'npm test && curl x'],
      worktreeRoot: wt.root,
      cwd: wt.root,
    });
    expect(result).toMatchObject({ _tag: 'Left', left: { reason: 'ShellNotAllowed' } });
  });

  it('refuses a cwd outside the worktree, and dangerous worktrees', async () => {
    const wt = worktree();
    const outside = await runSandboxed(cap('verify'), { argv: ['npm', 'test'], worktreeRoot: wt.root, cwd: '/tmp' });
    expect(outside).toMatchObject({ _tag: 'Left', left: { reason: 'CwdOutsideWorktree' } });
    const climbed = await runSandboxed(cap('verify'), {
      argv: ['npm', 'test'],
      worktreeRoot: wt.root,
      cwd: `${wt.root}/../..`,
    });
    expect(climbed).toMatchObject({ _tag: 'Left', left: { reason: 'CwdOutsideWorktree' } });
    for (const root of ['/', '/root', '/etc', '/usr/lib']) {
      const bad = await runSandboxed(cap('verify'), { argv: ['npm', 'test'], worktreeRoot: root, cwd: root });
      expect(bad).toMatchObject({ _tag: 'Left', left: { reason: 'BadWorktree' } });
    }
  });

  it('refuses bounds above the profile', async () => {
    const wt = worktree();
    const long = await runSandboxed(cap('hostile'), {
      argv: ['/bin/true'],
      worktreeRoot: wt.root,
      cwd: wt.root,
      timeoutMs: 24 * 3_600_000,
    });
    expect(long).toMatchObject({ _tag: 'Left', left: { reason: 'InvalidSpec' } });
  });
});

describe('runSandboxed (process jail, weaker)', () => {
  it('runs only when chosen, says it is weaker, gets its own HOME, and cleans up', async () => {
    const wt = worktree();
    const result = await run(cap('build', { backend: 'process-jail' }), {
      argv: ['sh', '-c', 'echo "$HOME"; env | sort'],
      worktreeRoot: wt.root,
      cwd: wt.root,
      env: { LD_PRELOAD: '/tmp/x.so', NODE_ENV: 'test' },
    });
    expect(result).toMatchObject({ backend: 'process-jail', isolation: 'process-jail', exitCode: 0 });
    const home = result.stdout.text.split('\n')[0] ?? '';
    expect(home).toMatch(/crustcore-jail-.*\/home$/);
    expect(existsSync(home)).toBe(false);
    expect(result.stdout.text).not.toContain('LD_PRELOAD');
    expect(result.stdout.text).toContain('NODE_ENV=test');
    expect(result.envDropped).toContainEqual(expect.objectContaining({ name: 'LD_PRELOAD', reason: 'Dangerous' }));
  });
});

describe('runSandboxed with a read-only worktree', () => {
  const script = 'cat code.txt; echo planted > code.txt && echo WROTE; echo new > new.txt && echo CREATED; true';

  it('reads the worktree but changes nothing in it (CONTROL: read-write, the same script writes)', async () => {
    const held = worktree({ 'code.txt': 'original\n' });
    const readOnly = await run(cap('worker'), {
      argv: ['/bin/sh', '-c', script],
      worktreeRoot: held.root,
      worktreeAccess: 'read-only',
      cwd: held.root,
    });
    expect(readOnly.stdout.text).toContain('original');
    expect(readOnly.stdout.text).not.toMatch(/WROTE|CREATED/);
    expect(readFileSync(join(held.root, 'code.txt'), 'utf8')).toBe('original\n');
    expect(existsSync(join(held.root, 'new.txt'))).toBe(false);

    const open = worktree({ 'code.txt': 'original\n' });
    const readWrite = await run(cap('worker'), {
      argv: ['/bin/sh', '-c', script],
      worktreeRoot: open.root,
      cwd: open.root,
    });
    expect(readWrite.stdout.text).toMatch(/WROTE[\s\S]*CREATED/);
    expect(readFileSync(join(open.root, 'code.txt'), 'utf8')).toBe('planted\n');
  });

  it('is refused on the process jail, which cannot hold it', async () => {
    const held = worktree();
    const refused = await runSandboxed(cap('worker', { backend: 'process-jail' }), {
      argv: ['/bin/true'],
      worktreeRoot: held.root,
      worktreeAccess: 'read-only',
      cwd: held.root,
    });
    expect(refused._tag === 'Left' && refused.left.reason).toBe('BackendUnavailable');
  });
});
