import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
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
    // The journal, and its marker: start-up recovery need not read it again.
    expect(readdirSync(join(base, 'journal')).sort()).toEqual([
      result.right.journalId,
      `${result.right.journalId}.ended`,
    ]);
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
    // Marked ended: start-up recovery skips it; asked for every journal, it is found rolled back.
    const recovered = recoverJournals({ journalRoot: join(base, 'journal') });
    expect(recovered._tag === 'Right' && recovered.right).toEqual([]);
    const all = recoverJournals({ journalRoot: join(base, 'journal'), includeEnded: true });
    expect(all._tag === 'Right' && all.right.map((r) => [r.found, r.action])).toEqual([['ROLLED_BACK', 'none']]);
  });

  it('start-up recovery reads only journals without an ended marker, and marks the ended ones it reads', () => {
    const base = tempDir();
    const root = join(base, 'tree');
    const journalRoot = join(base, 'journal');
    writeTree(root, new Map());
    const text = (s: string) => ({ bytes: new TextEncoder().encode(s), mode: 'regular' as const });
    const ids = ['a1', 'a2', 'a3'];
    for (const id of ids) {
      const applied = applyChanges([{ path: `${id}.txt`, before: null, after: text(id) }], {
        root,
        journalRoot,
        journalId: id,
      });
      expect(applied._tag).toBe('Right');
    }
    // a2 as a journal written before markers (or whose marker a crash lost); a3's journal made unreadable:
    // a marker is trusted without reading, so a reader that read it would report it.
    rmSync(join(journalRoot, 'a2.ended'));
    writeFileSync(join(journalRoot, 'a3', 'journal.json'), 'not json');
    const first = recoverJournals({ journalRoot });
    expect(first._tag === 'Right' && first.right.map((r) => [r.journalId, r.found])).toEqual([['a2', 'APPLIED']]);
    expect(
      readdirSync(journalRoot)
        .filter((n) => n.endsWith('.ended'))
        .sort(),
    ).toEqual(['a1.ended', 'a2.ended', 'a3.ended']);
    const second = recoverJournals({ journalRoot });
    expect(second._tag === 'Right' && second.right).toEqual([]);
    // CONTROL: reading every journal finds the damaged one.
    const all = recoverJournals({ journalRoot, includeEnded: true });
    expect(all._tag === 'Right' && all.right.map((r) => [r.journalId, r.found])).toEqual([
      ['a1', 'APPLIED'],
      ['a2', 'APPLIED'],
      ['a3', 'UNREADABLE'],
    ]);
  });

  it('a journal left PENDING by a crash is read and rolled back even when other journals are marked', () => {
    const base = tempDir();
    const root = join(base, 'tree');
    const journalRoot = join(base, 'journal');
    writeTree(root, new Map());
    const text = (s: string) => ({ bytes: new TextEncoder().encode(s), mode: 'regular' as const });
    expect(
      applyChanges([{ path: 'done.txt', before: null, after: text('x') }], { root, journalRoot, journalId: 'b1' })._tag,
    ).toBe('Right');
    const crashed = applyChanges([{ path: 'half.txt', before: null, after: text('y') }], {
      root,
      journalRoot,
      journalId: 'b2',
      onStep: (step) => {
        // Simulates the kill: the process never gets past the write (no in-process rollback runs).
        if (step === 'rename:0') throw Object.assign(new Error('killed'), { killed: true });
      },
    });
    // The in-process rollback already ran here; put the journal back to APPLYING as a SIGKILL would leave it.
    expect(crashed._tag).toBe('Left');
    const recordPath = join(journalRoot, 'b2', 'journal.json');
    const record = JSON.parse(readFileSync(recordPath, 'utf8')) as Record<string, unknown>;
    writeFileSync(recordPath, JSON.stringify({ ...record, state: 'APPLYING' }));
    rmSync(join(journalRoot, 'b2.ended'));
    writeFileSync(join(root, 'half.txt'), 'y');
    const recovered = recoverJournals({ journalRoot });
    expect(recovered._tag === 'Right' && recovered.right.map((r) => [r.journalId, r.found, r.action])).toEqual([
      ['b2', 'APPLYING', 'rolled-back'],
    ]);
    expect(readdirSync(root).sort()).toEqual(['done.txt']);
  });
});
