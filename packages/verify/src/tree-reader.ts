/**
 * Reads trees and small blobs through git (never the work tree's files: a
 * symlink or a racing writer there could show something other than what the
 * patch carries). Everything is bounded; a blob too large or not text reads
 * as null, and callers treat null as "cannot tell" (the cautious answer).
 */
import { type GitLocation, gitRawText, gitText } from './git.js';

export interface TreeFile {
  readonly path: string;
  readonly mode: string;
  readonly id: string;
}

export interface TreeReader {
  /** Every file of `treeish` (blobs, symlinks, gitlinks), recursively. */
  listTree(treeish: string): Promise<readonly TreeFile[] | null>;
  /** A blob's text, or null when unreadable or larger than `maxBytes`. */
  readBlob(id: string, maxBytes?: number): Promise<string | null>;
  /** Many small blobs at once (symlink targets); missing or oversized ones are absent from the map. */
  readBlobs(ids: readonly string[]): Promise<Map<string, string>>;
  /** Of `paths` (literal; all of the tree when more than 500), those whose text has a line matching `pattern` (ERE, case-insensitive). */
  grepTree(treeish: string, pattern: string, paths: readonly string[]): Promise<readonly string[] | null>;
  /** The repository's own `core.hooksPath` (its config file only, not our overrides), or null. */
  hooksPath(): Promise<string | null>;
}

const MAX_TREE_BYTES = 64 * 1024 * 1024;
const DEFAULT_BLOB_BYTES = 1024 * 1024;

const MODE = /^\d{6}$/;
const OBJECT_TYPE = /^\w+$/;
const OBJECT_ID = /^[0-9a-f]{40,64}$/;

/**
 * Parses `git ls-tree -z` records, `<mode> <type> <id>\t<path>`; anything else is skipped. Split
 * by hand rather than by one regex over the whole record: a 20k-file tree is 20k records, and the
 * path part (any bytes but NUL) is what made the regex slow.
 */
export function parseLsTree(text: string): TreeFile[] {
  const files: TreeFile[] = [];
  for (const record of text.split('\0')) {
    const tab = record.indexOf('\t');
    if (tab < 0 || tab === record.length - 1) continue;
    const typeEnd = record.indexOf(' ', 7);
    if (record[6] !== ' ' || typeEnd < 0) continue;
    const mode = record.slice(0, 6);
    const id = record.slice(typeEnd + 1, tab);
    if (!MODE.test(mode) || !OBJECT_TYPE.test(record.slice(7, typeEnd)) || !OBJECT_ID.test(id)) continue;
    files.push({ mode, id, path: record.slice(tab + 1) });
  }
  return files;
}

/** Parses `git cat-file --batch` output: `<id> <type> <size>\n<bytes>\n` per object. */
export function parseBatch(bytes: Buffer): Map<string, string> {
  const out = new Map<string, string>();
  let at = 0;
  while (at < bytes.length) {
    const newline = bytes.indexOf(10, at);
    if (newline < 0) break;
    const header = /^([0-9a-f]{40,64}) (\w+) (\d+)$/.exec(bytes.subarray(at, newline).toString('utf8'));
    if (header === null) {
      at = newline + 1; // `<id> missing`
      continue;
    }
    const size = Number(header[3]);
    out.set(header[1] as string, bytes.subarray(newline + 1, newline + 1 + size).toString('utf8'));
    at = newline + 1 + size + 1;
  }
  return out;
}

/**
 * Answers about one full object id never change (git names objects by their
 * content), and a task asks the same ones twice: once for the worker's patch,
 * once for the verify worktree's tree (both read the task's object store). Only
 * full ids are remembered (never a ref such as HEAD), only answers git gave
 * (never a failure), only a few, and each only for the object store that gave it.
 */
const FULL_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
const REMEMBERED = 32;
const answers = new Map<string, unknown>();

async function rememberedIn<T>(id: string, key: string, ask: () => Promise<T | null>): Promise<T | null> {
  if (!FULL_ID.test(id)) return ask();
  if (answers.has(key)) return answers.get(key) as T;
  const answer = await ask();
  if (answer === null) return null;
  answers.set(key, answer);
  if (answers.size > REMEMBERED) answers.delete(answers.keys().next().value as string);
  return answer;
}

export function gitTreeReader(location: GitLocation): TreeReader {
  // Answers are remembered per object store: a long-lived process (the daemon, the MCP server)
  // reads several repositories, and one repository's objects must never answer for another's.
  const store =
    location.objects === undefined
      ? location.gitDir
      : `${location.objects.write ?? ''}\0${location.objects.read.join('\0')}`;
  const remembered = <T>(id: string, key: string, ask: () => Promise<T | null>) =>
    rememberedIn(id, `${store}\0${key}`, ask);
  return {
    listTree(treeish) {
      return remembered(treeish, `ls-tree\0${treeish}`, async () => {
        const listed = await gitRawText(location, ['ls-tree', '-r', '-z', '--full-tree', treeish], {
          maxOutputBytes: MAX_TREE_BYTES,
        });
        return listed._tag === 'Right' ? parseLsTree(listed.right) : null;
      });
    },
    readBlob(id, maxBytes = DEFAULT_BLOB_BYTES) {
      return remembered(id, `blob\0${maxBytes}\0${id}`, async () => {
        // Output past the budget is a failure (never a truncated text), so an oversized blob reads as null.
        const read = await gitRawText(location, ['cat-file', 'blob', id], { maxOutputBytes: maxBytes });
        return read._tag === 'Right' ? read.right : null;
      });
    },
    async readBlobs(ids) {
      const out = new Map<string, string>();
      if (ids.length === 0) return out;
      const read = await gitRawText(location, ['cat-file', '--batch'], {
        stdin: `${ids.join('\n')}\n`,
        maxOutputBytes: MAX_TREE_BYTES,
      });
      if (read._tag === 'Left') return out;
      return parseBatch(Buffer.from(read.right, 'utf8'));
    },
    grepTree(treeish, pattern, paths) {
      if (paths.length === 0) return Promise.resolve([]);
      return remembered(treeish, `grep\0${treeish}\0${pattern}\0${paths.join('\0')}`, () =>
        grepOnce(location, treeish, pattern, paths),
      );
    },
    async hooksPath() {
      const value = await gitText(location, ['config', '--local', '--get', 'core.hooksPath']);
      return value._tag === 'Right' && value.right !== '' ? value.right : null;
    },
  };
}

/** Of `paths` in `treeish`, those with a line matching `pattern`; null when git could not tell. */
async function grepOnce(
  location: GitLocation,
  treeish: string,
  pattern: string,
  paths: readonly string[],
): Promise<readonly string[] | null> {
  const only = paths.length > 500 ? [] : paths;
  // Exit 1 means "no match", which runGitAt reports as a failure: tell the two apart by stderr.
  const args = ['grep', '-z', '-l', '-I', '-i', '-E', '-e', pattern, treeish, '--', ...only];
  const found = await gitRawText(location, args);
  if (found._tag === 'Left') return found.left.exitCode === 1 && found.left.stderr === '' ? [] : null;
  const prefix = `${treeish}:`;
  return found.right
    .split('\0')
    .filter((line) => line !== '')
    .map((line) => (line.startsWith(prefix) ? line.slice(prefix.length) : line));
}
