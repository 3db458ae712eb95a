/**
 * Test fixtures: temp roots with capabilities, cleaned up after each test file.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Result } from '@crustcore/kernel';
import { afterAll } from 'vitest';
import { FsReadCap, FsWriteCap, WorktreeRoot } from '../src/index.js';

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** Unwraps a Right or fails the test with the Left. */
export function right<E, A>(result: Result<E, A>): A {
  if (result._tag === 'Left') throw new Error(`expected Right, got ${JSON.stringify(result.left)}`);
  return result.right;
}

/** Unwraps a Left or fails the test. */
export function left<E, A>(result: Result<E, A>): E {
  if (result._tag === 'Right') throw new Error(`expected Left, got Right ${JSON.stringify(result.right)}`);
  return result.left;
}

export interface Sandbox {
  /** Parent temp dir holding `root` and `outside`. */
  readonly base: string;
  readonly rootPath: string;
  readonly outside: string;
  readonly root: WorktreeRoot;
  readonly read: FsReadCap;
  readonly write: FsWriteCap;
  /** Creates a file under the root (test setup, not through the tools). */
  readonly put: (relative: string, content: string) => void;
}

export function makeSandbox(): Sandbox {
  const base = mkdtempSync(join(tmpdir(), 'confine-test-'));
  made.push(base);
  const rootPath = join(base, 'root');
  const outside = join(base, 'outside');
  mkdirSync(rootPath);
  mkdirSync(outside);
  const root = right(WorktreeRoot.open(rootPath));
  return {
    base,
    rootPath,
    outside,
    root,
    read: right(FsReadCap.grant(root, 'test')),
    write: right(FsWriteCap.grant(root, 'test')),
    put: (relative, content) => {
      const target = join(rootPath, relative);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, content);
    },
  };
}
