/**
 * Apply journal cost: applying 100 files with fsync through the journal
 * (drift check, journal writes, preimage pack, temp+fsync+rename, directory
 * fsyncs) against a bare loop of write+fsync+rename of the same 100 files,
 * both in the same run on the same disk. Target: within 1.3×.
 *
 * Each call flips the tree between two versions, so the journal's expected
 * preimages always match without a reset between iterations.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyChanges, type FileChange } from '@crustcore/verify';
import { ratio, runCases } from './harness.js';

const FILES = 100;
const base = mkdtempSync(join(tmpdir(), 'apply-bench-'));
const sha = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const content = (version: number, i: number): Uint8Array =>
  new TextEncoder().encode(`// file ${i}, version ${version}\n${'export const value = 1;\n'.repeat(40)}`);

function makeTree(name: string): string {
  const root = join(base, name);
  for (let i = 0; i < FILES; i += 1) {
    mkdirSync(join(root, `src/d${i % 4}`), { recursive: true });
    writeFileSync(join(root, `src/d${i % 4}/f${i}.ts`), content(0, i));
  }
  return root;
}

const batches: FileChange[][] = [0, 1].map((from) =>
  Array.from({ length: FILES }, (_, i) => ({
    path: `src/d${i % 4}/f${i}.ts`,
    before: { sha256: sha(content(from, i)), mode: 'regular' as const },
    after: { bytes: content(1 - from, i), mode: 'regular' as const },
  })),
);

const journalTree = makeTree('journal-tree');
const journalRoot = join(base, 'journal');
let journalVersion = 0;
function journalApply(): void {
  const result = applyChanges(batches[journalVersion] as FileChange[], { root: journalTree, journalRoot });
  if (result._tag === 'Left') throw new Error(JSON.stringify(result.left));
  journalVersion = 1 - journalVersion;
}

const bareTree = makeTree('bare-tree');
let bareVersion = 0;
function bareLoop(): void {
  const batch = batches[bareVersion] as FileChange[];
  for (const change of batch) {
    const target = join(bareTree, change.path);
    const temp = `${target}.tmp`;
    const fd = openSync(temp, 'w', 0o644);
    writeSync(fd, (change.after as { bytes: Uint8Array }).bytes);
    fsyncSync(fd);
    closeSync(fd);
    renameSync(temp, target);
  }
  bareVersion = 1 - bareVersion;
}

try {
  const rows = await runCases(
    `apply of ${FILES} files with fsync (ext4 temp dir)`,
    [
      { name: 'bare write+fsync+rename loop (baseline)', fn: bareLoop, itemsPerCall: FILES },
      { name: 'apply journal (drift check, journal, preimages, fsync)', fn: journalApply, itemsPerCall: FILES },
    ],
    3_000,
  );
  const [bare, journal] = rows as [(typeof rows)[0], (typeof rows)[0]];
  ratio('apply journal vs bare write+fsync+rename', journal, bare, '≤ 1.3×');
} finally {
  rmSync(base, { recursive: true, force: true });
}
