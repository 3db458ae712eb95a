/** Throwaway worktrees for tests: a real directory under the host /tmp, removed by the caller. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface TestWorktree {
  readonly root: string;
  readonly remove: () => void;
}

export function makeWorktree(files: Readonly<Record<string, string>> = {}): TestWorktree {
  const root = mkdtempSync(join(tmpdir(), 'crustcore-sandbox-test-'));
  for (const [relative, text] of Object.entries(files)) {
    const path = join(root, relative);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  }
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}
