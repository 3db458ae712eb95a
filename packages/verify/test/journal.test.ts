import { mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyChanges, readJournal, recoverJournals } from '../src/index.js';
import { changesBetween, expectedSnapshot, makeBatch, snapshot, writeTree } from './journal-fixture.js';

const scratch: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cc-journal-'));
  scratch.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const filesOnly = (snap: Map<string, string>): Map<string, string> =>
  new Map([...snap].filter(([, value]) => value !== 'dir'));

describe('apply journal', () => {
  it('applies a mixed batch (new, deleted, renamed, exec bit, binary, symlink) and records APPLIED', () => {
    const base = tempDir();
    const root = join(base, 'tree');
    const { oldTree, newTree } = makeBatch(24);
    writeTree(root, oldTree);
    const result = applyChanges(changesBetween(oldTree, newTree), {
      root,
      journalRoot: join(base, 'journal'),
      label: 't_1',
    });
    expect(result._tag).toBe('Right');
    expect(filesOnly(snapshot(root))).toEqual(filesOnly(expectedSnapshot(newTree, join(base, 'x'))));
    if (result._tag !== 'Right') return;
    expect(readJournal(result.right.journalDir)?.state).toBe('APPLIED');
    expect(readdirSync(join(base, 'journal'))).toEqual([result.right.journalId]);
  });

  it('aborts the whole batch with zero writes when one target drifted, even same size and same mtime', () => {
    const base = tempDir();
    const root = join(base, 'tree');
    const { oldTree, newTree } = makeBatch(16);
    writeTree(root, oldTree);
    const victim = join(root, 'src/d1/m6.ts');
    // Whole seconds, so utimes can put back exactly the same mtime after the edit.
    utimesSync(victim, 1_700_000_000, 1_700_000_000);
    const before = statSync(victim);
    const original = "export const v6 = 'old';\n";
    const edited = "export const v6 = 'OLD';\n";
    expect(edited.length).toBe(original.length);
    writeFileSync(victim, edited);
    utimesSync(victim, before.atime, before.mtime);
    expect(statSync(victim).mtimeMs).toBe(before.mtimeMs);
    expect(statSync(victim).size).toBe(before.size);
    const untouched = snapshot(root);
    const result = applyChanges(changesBetween(oldTree, newTree), { root, journalRoot: join(base, 'journal') });
    expect(result._tag).toBe('Left');
    if (result._tag !== 'Left') return;
    expect(result.left._tag).toBe('Drift');
    if (result.left._tag !== 'Drift') return;
    expect(result.left.drifted.map((d) => d.path)).toEqual(['src/d1/m6.ts']);
    expect(snapshot(root)).toEqual(untouched);
  });

  it('reports every drifted file: a new file that already exists and a deleted one that is gone', () => {
    const base = tempDir();
    const root = join(base, 'tree');
    const { oldTree, newTree } = makeBatch(16);
    writeTree(root, oldTree);
    rmSync(join(root, 'src/d1/gone1.ts'));
    const changes = changesBetween(oldTree, newTree);
    writeTree(join(base, 'unused'), new Map());
    const result = applyChanges(
      [...changes, { path: 'extra.txt', before: null, after: { bytes: new Uint8Array([1]), mode: 'regular' } }],
      { root, journalRoot: join(base, 'journal') },
    );
    expect(result._tag).toBe('Left');
    if (result._tag === 'Left' && result.left._tag === 'Drift') {
      expect(result.left.drifted.map((d) => [d.path, d.actual.kind])).toEqual([['src/d1/gone1.ts', 'absent']]);
    }
  });

  it('rejects unsafe paths before touching anything', () => {
    const base = tempDir();
    const root = join(base, 'tree');
    writeTree(root, new Map());
    for (const path of ['../escape', '/abs', '.git/config', 'a/.GIT/x', 'a//b', 'a/./b']) {
      const result = applyChanges([{ path, before: null, after: { bytes: new Uint8Array(), mode: 'regular' } }], {
        root,
        journalRoot: join(base, 'journal'),
      });
      expect(result._tag === 'Left' && result.left._tag).toBe('UnsafePath');
    }
  });

  it('rolls back in process when a write fails midway, and recovery is then a no-op', () => {
    const base = tempDir();
    const root = join(base, 'tree');
    const { oldTree, newTree } = makeBatch(24);
    writeTree(root, oldTree);
    const expected = snapshot(root);
    const result = applyChanges(changesBetween(oldTree, newTree), {
      root,
      journalRoot: join(base, 'journal'),
      onStep: (step) => {
        if (step === 'rename:9') throw new Error('disk full (injected)');
      },
    });
    expect(result._tag === 'Left' && result.left._tag === 'ApplyFailed' && result.left.rolledBack).toBe(true);
    expect(snapshot(root)).toEqual(expected);
    const recovered = recoverJournals({ journalRoot: join(base, 'journal') });
    expect(recovered._tag === 'Right' && recovered.right.map((r) => [r.found, r.action])).toEqual([
      ['ROLLED_BACK', 'none'],
    ]);
  });
});
