/**
 * resolveWorkerProgram: the worker's own files become visible, and nothing
 * wider. Real files in a scratch tree; HOME is pointed at a scratch home so
 * the "never $HOME" rule is exercised without touching the real one.
 */
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveWorkerProgram } from '../src/index.js';

let root: string;
let savedHome: string | undefined;

function file(path: string, text: string, executable = false): string {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  if (executable) chmodSync(path, 0o755);
  return path;
}

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'crustcore-worker-program-')));
  savedHome = process.env.HOME;
  process.env.HOME = join(root, 'home');
  mkdirSync(join(root, 'home', '.ssh'), { recursive: true });
});
afterEach(() => {
  process.env.HOME = savedHome;
});

const host = (cwd: string, path = '/usr/bin:/bin') => ({ cwd, path });

describe('resolveWorkerProgram', () => {
  it('an interpreter + script outside the system view: the script’s directory, argv made absolute', () => {
    const script = file(join(root, 'tools', 'agent', 'main.mjs'), 'x');
    const resolved = resolveWorkerProgram(['node', 'tools/agent/main.mjs'], host(root));
    expect(resolved.argv).toEqual(['node', script]);
    expect(resolved.binds).toEqual([{ source: join(root, 'tools', 'agent'), mode: 'read-only' }]);
  });

  it('a relative executable (./fix.sh) is bound as a file, at its real path', () => {
    const repo = join(root, 'repo');
    mkdirSync(join(repo, '.git'), { recursive: true });
    const fix = file(join(repo, 'fix.sh'), '#!/bin/sh\ntrue\n', true);
    const resolved = resolveWorkerProgram(['./fix.sh', '--fast'], host(repo));
    expect(resolved.argv).toEqual([fix, '--fast']);
    expect(resolved.binds).toEqual([{ source: fix, mode: 'read-only' }]);
  });

  it('a script at the top of a checkout gets no directory bind (untracked .env stays hidden)', () => {
    const repo = join(root, 'repo');
    mkdirSync(join(repo, '.git'), { recursive: true });
    file(join(repo, '.env'), 'TOKEN=x\n');
    const tool = file(join(repo, 'tool.py'), 'print(1)\n');
    const resolved = resolveWorkerProgram(['python3', 'tool.py'], host(repo));
    expect(resolved.binds).toEqual([{ source: tool, mode: 'read-only' }]);
  });

  it('never $HOME wholesale: a script directly in HOME is bound alone', () => {
    const home = join(root, 'home');
    const agent = file(join(home, 'agent.mjs'), 'x');
    const resolved = resolveWorkerProgram(['node', agent], host(home));
    expect(resolved.binds).toEqual([{ source: agent, mode: 'read-only' }]);
  });

  it('a bare name is looked up on the user’s PATH; a program in the system view needs no bind', () => {
    const agent = file(join(root, 'home', 'bin', 'my-agent'), '#!/bin/sh\ntrue\n', true);
    const resolved = resolveWorkerProgram(['my-agent'], host(root, `${join(root, 'home', 'bin')}:/usr/bin`));
    expect(resolved.argv).toEqual([agent]);
    expect(resolved.binds).toEqual([{ source: agent, mode: 'read-only' }]);
    expect(resolveWorkerProgram(['sh', '-c', 'true'], host(root))).toEqual({ argv: ['sh', '-c', 'true'], binds: [] });
  });

  it('nothing that overlaps the paths to avoid (the worktree) is bound', () => {
    const worktree = join(root, 'tools', 'agent', 'wt');
    mkdirSync(worktree, { recursive: true });
    const script = file(join(root, 'tools', 'agent', 'main.mjs'), 'x');
    const resolved = resolveWorkerProgram(['node', script], { ...host(root), avoid: [worktree] });
    expect(resolved.binds).toEqual([{ source: script, mode: 'read-only' }]);
  });

  it('a program that does not exist is left as typed (the sandbox reports it)', () => {
    expect(resolveWorkerProgram(['no-such-agent-xyz'], host(root))).toEqual({ argv: ['no-such-agent-xyz'], binds: [] });
  });
});
