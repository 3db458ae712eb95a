import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mintSandboxExecCap, runSandboxed } from '../src/index.js';
import { makeWorktree } from './worktree.js';

const scratch = mkdtempSync(join(tmpdir(), 'crustcore-envbind-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A fake installed dependency tree with an executable in its bin directory. */
function dependencyTree(name: string): string {
  const root = join(scratch, name);
  mkdirSync(join(root, 'bin'), { recursive: true });
  writeFileSync(join(root, 'marker.txt'), `dependency ${name}\n`);
  writeFileSync(join(root, 'bin', 'hello-tool'), '#!/bin/sh\necho tool-from-bind\n');
  chmodSync(join(root, 'bin', 'hello-tool'), 0o755);
  return root;
}

function capOrThrow(...args: Parameters<typeof mintSandboxExecCap>) {
  const cap = mintSandboxExecCap(...args);
  if (cap._tag === 'Left') throw new Error(cap.left.message);
  return cap.right;
}

describe('environment binds', () => {
  it('show dependencies read-only at a worktree-relative path in the verify profile', async () => {
    const deps = dependencyTree('deps-a');
    const cap = capOrThrow('verify', { environment: { worktree: [{ source: deps, path: 'sub/node_modules' }] } });
    const worktree = makeWorktree({ 'sub/index.js': '' });
    try {
      const read = await runSandboxed(cap, {
        argv: ['cat', `${worktree.root}/sub/node_modules/marker.txt`],
        worktreeRoot: worktree.root,
        cwd: worktree.root,
      });
      expect(read).toMatchObject({ right: { exitCode: 0 } });
      if (read._tag === 'Right') expect(read.right.stdout.text).toBe('dependency deps-a\n');
      const write = await runSandboxed(cap, {
        argv: ['touch', `${worktree.root}/sub/node_modules/written`],
        worktreeRoot: worktree.root,
        cwd: worktree.root,
      });
      expect(write._tag === 'Right' && write.right.exitCode).not.toBe(0);
      if (write._tag === 'Right') expect(write.right.stderr.text).toMatch(/Read-only file system/);
    } finally {
      worktree.remove();
    }
  });

  it('lets PATH name a bin directory inside a dependency bind, but not elsewhere in the worktree', async () => {
    const deps = dependencyTree('deps-b');
    const cap = capOrThrow('verify', { environment: { worktree: [{ source: deps, path: '.venv' }] } });
    const worktree = makeWorktree({ 'planted/hello-tool': '#!/bin/sh\necho planted\n' });
    chmodSync(join(worktree.root, 'planted', 'hello-tool'), 0o755);
    try {
      const trusted = await runSandboxed(cap, {
        argv: ['hello-tool'],
        worktreeRoot: worktree.root,
        cwd: worktree.root,
        env: { PATH: `${worktree.root}/.venv/bin:/usr/bin:/bin` },
      });
      expect(trusted).toMatchObject({ right: { exitCode: 0, envDropped: [] } });
      // Control: the same PATH shape naming a worker-writable directory is dropped.
      const planted = await runSandboxed(cap, {
        argv: ['sh', '-c', 'echo $PATH'],
        worktreeRoot: worktree.root,
        cwd: worktree.root,
        env: { PATH: `${worktree.root}/planted:/usr/bin:/bin` },
      });
      // verify allows no shell: refused before anything runs.
      expect(planted).toMatchObject({ left: { reason: 'ShellNotAllowed' } });
      const plantedTool = await runSandboxed(cap, {
        argv: ['hello-tool'],
        worktreeRoot: worktree.root,
        cwd: worktree.root,
        env: { PATH: `${worktree.root}/planted:/usr/bin:/bin` },
      });
      expect(plantedTool._tag === 'Right' && plantedTool.right.envDropped.map((d) => d.name)).toEqual(['PATH']);
      expect(plantedTool._tag === 'Right' && plantedTool.right.exitCode).not.toBe(0);
    } finally {
      worktree.remove();
    }
  });

  it('binds a toolchain directory at its own path', async () => {
    const tool = dependencyTree('toolchain');
    const cap = capOrThrow('verify', { environment: { tools: [tool] } });
    const worktree = makeWorktree();
    try {
      const ran = await runSandboxed(cap, {
        argv: [`${tool}/bin/hello-tool`],
        worktreeRoot: worktree.root,
        cwd: worktree.root,
      });
      expect(ran).toMatchObject({ right: { exitCode: 0 } });
      // Control: without the bind the same path does not exist inside.
      const bare = await runSandboxed(capOrThrow('verify'), {
        argv: [`${tool}/bin/hello-tool`],
        worktreeRoot: worktree.root,
        cwd: worktree.root,
      });
      expect(bare._tag === 'Right' && bare.right.startError?.reason).toBe('NotFound');
    } finally {
      worktree.remove();
    }
  });

  it('refuses a mount point that is a symlink in the worktree (varied depth)', async () => {
    const deps = dependencyTree('deps-c');
    for (const path of ['node_modules', 'pkg/node_modules']) {
      const cap = capOrThrow('verify', { environment: { worktree: [{ source: deps, path }] } });
      const worktree = makeWorktree({ 'keep.txt': '' });
      try {
        const top = path.split('/')[0] as string;
        symlinkSync('/usr/lib', join(worktree.root, top));
        const ran = await runSandboxed(cap, { argv: ['true'], worktreeRoot: worktree.root, cwd: worktree.root });
        expect(ran).toMatchObject({ left: { reason: 'ExtraBindConflict' } });
      } finally {
        worktree.remove();
      }
    }
  });

  it('refuses bad requests: relative escapes, .git, credentials, hostile, the jail', () => {
    const deps = dependencyTree('deps-d');
    for (const path of ['../x', '/abs', '.git', '.git/hooks', 'a/../b', './a', '']) {
      expect(mintSandboxExecCap('verify', { environment: { worktree: [{ source: deps, path }] } })).toMatchObject({
        left: { reason: 'BadEnvironment' },
      });
    }
    expect(mintSandboxExecCap('verify', { environment: { tools: ['/usr/bin'] } })).toMatchObject({
      left: { reason: 'BadEnvironment' },
    });
    expect(mintSandboxExecCap('verify', { environment: { tools: ['/etc'] } })).toMatchObject({
      left: { reason: 'BadEnvironment' },
    });
    expect(mintSandboxExecCap('hostile', { environment: { tools: [deps] } })).toMatchObject({
      left: { reason: 'BadEnvironment' },
    });
    expect(mintSandboxExecCap('verify', { backend: 'process-jail', environment: { tools: [deps] } })).toMatchObject({
      left: { reason: 'BadEnvironment' },
    });
  });
});
