/**
 * Shared fixture for apply-journal tests: a batch that exercises modified,
 * new (in new directories), deleted, renamed, executable-bit, binary and
 * symlink changes, plus helpers to lay down the old tree and snapshot a tree.
 */
import { createHash } from 'node:crypto';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { FileChange, FileMode } from '../src/index.js';

export interface TreeFile {
  readonly bytes: Uint8Array;
  readonly mode: FileMode;
}
export type Tree = ReadonlyMap<string, TreeFile>;

const sha = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

function binary(seed: number, size: number): Uint8Array {
  const out = new Uint8Array(size);
  let x = seed * 2654435761;
  for (let i = 0; i < size; i += 1) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

/** Old and new trees for a batch of `count` files (count ≥ 8). */
export function makeBatch(count: number): { oldTree: Tree; newTree: Tree } {
  const oldTree = new Map<string, TreeFile>();
  const newTree = new Map<string, TreeFile>();
  const text = (s: string): Uint8Array => new TextEncoder().encode(s);
  for (let i = 0; i < count; i += 1) {
    const dir = `src/d${i % 5}`;
    switch (i % 8) {
      case 0: // new file in a new directory
        newTree.set(`new/n${i}/file${i}.ts`, { bytes: text(`export const n${i} = ${i};\n`), mode: 'regular' });
        break;
      case 1: // deleted
        oldTree.set(`${dir}/gone${i}.ts`, { bytes: text(`old ${i}\n`), mode: 'regular' });
        break;
      case 2: // renamed (delete + create with the same content)
        oldTree.set(`${dir}/before${i}.ts`, { bytes: text(`moved ${i}\n`), mode: 'regular' });
        newTree.set(`${dir}/after${i}.ts`, { bytes: text(`moved ${i}\n`), mode: 'regular' });
        break;
      case 3: // executable bit only
        oldTree.set(`bin/tool${i}.sh`, { bytes: text(`#!/bin/sh\necho ${i}\n`), mode: 'regular' });
        newTree.set(`bin/tool${i}.sh`, { bytes: text(`#!/bin/sh\necho ${i}\n`), mode: 'executable' });
        break;
      case 4: // binary modified
        oldTree.set(`assets/b${i}.bin`, { bytes: binary(i, 700), mode: 'regular' });
        newTree.set(`assets/b${i}.bin`, { bytes: binary(i + 1000, 900), mode: 'regular' });
        break;
      case 5: // symlink retargeted
        oldTree.set(`${dir}/link${i}`, { bytes: text(`target-old-${i}`), mode: 'symlink' });
        newTree.set(`${dir}/link${i}`, { bytes: text(`target-new-${i}`), mode: 'symlink' });
        break;
      default: // plain modification (some to empty)
        oldTree.set(`${dir}/m${i}.ts`, { bytes: text(`export const v${i} = 'old';\n`), mode: 'regular' });
        newTree.set(`${dir}/m${i}.ts`, {
          bytes: text(i % 3 === 0 ? '' : `export const v${i} = 'new';\n`),
          mode: 'regular',
        });
    }
  }
  // An untouched bystander file must survive everything.
  oldTree.set('README.md', { bytes: text('# untouched\n'), mode: 'regular' });
  newTree.set('README.md', { bytes: text('# untouched\n'), mode: 'regular' });
  return { oldTree, newTree };
}

export function changesBetween(oldTree: Tree, newTree: Tree): FileChange[] {
  const paths = new Set([...oldTree.keys(), ...newTree.keys()]);
  const changes: FileChange[] = [];
  for (const path of [...paths].sort()) {
    const before = oldTree.get(path);
    const after = newTree.get(path);
    if (
      before !== undefined &&
      after !== undefined &&
      sha(before.bytes) === sha(after.bytes) &&
      before.mode === after.mode
    )
      continue;
    changes.push({
      path,
      before: before === undefined ? null : { sha256: sha(before.bytes), mode: before.mode },
      after: after === undefined ? null : { bytes: after.bytes, mode: after.mode },
    });
  }
  return changes;
}

export function writeTree(root: string, tree: Tree): void {
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  for (const [path, file] of tree) {
    const full = join(root, path);
    mkdirSync(join(full, '..'), { recursive: true });
    if (file.mode === 'symlink') symlinkSync(Buffer.from(file.bytes).toString('utf8'), full);
    else {
      writeFileSync(full, file.bytes);
      chmodSync(full, file.mode === 'executable' ? 0o755 : 0o644);
    }
  }
}

/** Every entry under root: files with content hash and mode, directories as 'dir'. */
export function snapshot(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (relative: string): void => {
    for (const name of readdirSync(join(root, relative))) {
      const path = relative === '' ? name : `${relative}/${name}`;
      const info = lstatSync(join(root, path));
      if (info.isSymbolicLink()) out.set(path, `symlink:${readlinkSync(join(root, path))}`);
      else if (info.isDirectory()) {
        out.set(path, 'dir');
        walk(path);
      } else out.set(path, `${(info.mode & 0o100) !== 0 ? 'x' : '-'}:${sha(readFileSync(join(root, path)))}`);
    }
  };
  walk('');
  return out;
}

/** Snapshot a tree would have when laid down by writeTree (directories included). */
export function expectedSnapshot(tree: Tree, scratch: string): Map<string, string> {
  writeTree(scratch, tree);
  const result = snapshot(scratch);
  rmSync(scratch, { recursive: true, force: true });
  return result;
}
