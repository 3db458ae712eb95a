/**
 * `buildIndex`: the repository's capsule, rebuilt incrementally. The file
 * list and blob ids come from the git index; an entry whose blob (and
 * language) the cache already holds is reused as is, so after one file
 * changes only that file is read and parsed. `stats.parsed` names the files
 * analysed this run — the observable the tests count.
 */
import { access, constants, realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';
import { err, ok, type Result } from '@crustcore/kernel';
import { discoverRepository, type GitLocation, openRepository, type Repository } from '@crustcore/verify';
import { type Analysis, analyseText, pathFacts } from './analyse.js';
import { entryKey, readEntryCache, writeCache } from './cache.js';
import type { CapsuleFile, RepoCapsule } from './capsule.js';
import { type IndexError, indexError } from './errors.js';
import { headCommit, type IndexedPath, listIndex, readBlobs, unstagedCount } from './git-files.js';
import { detectStack, MANIFEST_NAMES } from './stack.js';

export interface IndexOptions {
  readonly dir: string;
  /** The cache directory for this repository, beside its CrustCore state; refused when inside the work tree. */
  readonly cacheDirFor: (repo: Repository) => string;
}

export interface IndexStats {
  readonly files: number;
  /** Paths whose text was read and analysed this run (the rest came from the cache). */
  readonly parsed: readonly string[];
  readonly reused: number;
}

export interface IndexResult {
  readonly capsule: RepoCapsule;
  readonly stats: IndexStats;
  readonly cacheDir: string;
}

interface Target {
  readonly repo: Repository;
  readonly location: GitLocation;
  readonly cacheDir: string;
}

async function openTarget(options: IndexOptions): Promise<Result<IndexError, Target>> {
  const dir = resolve(options.dir);
  try {
    if (!(await stat(dir)).isDirectory()) return err(indexError('unreadable-dir', `${dir} is not a directory`));
    await access(dir, constants.R_OK | constants.X_OK);
  } catch (error) {
    return err(indexError('unreadable-dir', `cannot read ${dir}: ${(error as Error).message}`));
  }
  const [found, repo] = await Promise.all([discoverRepository(dir), openRepository(dir)]);
  if (found._tag === 'Left' || repo._tag === 'Left')
    return err(indexError('not-a-repository', `${dir} is not inside a git work tree`));
  const cacheDir = resolve(options.cacheDirFor(repo.right));
  const root = await realpath(found.right.root);
  const inside = relative(root, await realpathOrSelf(cacheDir));
  if (inside === '' || (!inside.startsWith('..') && !isAbsolute(inside)))
    return err(
      indexError('cache-inside-worktree', `the index cache ${cacheDir} would be inside the work tree ${root}`),
    );
  const location: GitLocation = { gitDir: found.right.gitDir, workTree: root, cwd: root };
  return ok({ repo: repo.right, location, cacheDir });
}

/** The real path of `path`, or of its nearest existing ancestor joined with the rest (the cache may not exist yet). */
async function realpathOrSelf(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch {
    const parent = resolve(path, '..');
    return parent === path ? path : resolve(await realpathOrSelf(parent), relative(parent, path));
  }
}

const isRegularFile = (file: IndexedPath): boolean => file.mode === '100644' || file.mode === '100755';
const baseName = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

async function analyseAll(location: GitLocation, files: readonly IndexedPath[], cacheDir: string) {
  const cache = await readEntryCache(cacheDir);
  const needed = files.filter(
    (file) => isRegularFile(file) && !cache.has(entryKey(file.blob, pathFacts(file.path).language)),
  );
  const manifests = files.filter((file) => isRegularFile(file) && MANIFEST_NAMES.has(baseName(file.path)));
  const read = await readBlobs(
    location,
    [...needed, ...manifests].map((file) => file.blob),
  );
  const fresh = new Map<string, Analysis>();
  const parsed: string[] = [];
  for (const file of needed) {
    const key = entryKey(file.blob, pathFacts(file.path).language);
    if (fresh.has(key)) continue;
    const text = read.texts.get(file.blob);
    if (read.tooLarge.has(file.blob)) fresh.set(key, { lines: 0, symbolSource: 'too-large', symbols: [] });
    else if (text !== undefined) {
      fresh.set(key, await analyseText(pathFacts(file.path).language, text));
      parsed.push(file.path);
    }
  }
  const manifestTexts = new Map<string, string>();
  for (const file of manifests) {
    const text = read.texts.get(file.blob);
    if (text !== undefined) manifestTexts.set(file.path, text);
  }
  return { cache, fresh, parsed, manifestTexts };
}

export async function buildIndex(options: IndexOptions): Promise<Result<IndexError, IndexResult>> {
  const target = await openTarget(options);
  if (target._tag === 'Left') return target;
  const { repo, location, cacheDir } = target.right;
  // Independent git calls: run together (each is a process start, most of a re-index's time).
  const [listed, head, unstaged] = await Promise.all([
    listIndex(location),
    headCommit(location),
    unstagedCount(location),
  ]);
  if (typeof listed === 'string') return err(indexError('git-failed', listed));
  const { cache, fresh, parsed, manifestTexts } = await analyseAll(location, listed, cacheDir);
  const files: CapsuleFile[] = listed.map((file) => {
    const facts = pathFacts(file.path);
    const key = entryKey(file.blob, facts.language);
    const analysis: Analysis = isRegularFile(file)
      ? (cache.get(key) ?? fresh.get(key) ?? { lines: 0, symbolSource: 'none', symbols: [] })
      : { lines: 0, symbolSource: 'not-a-file', symbols: [] };
    return { path: file.path, ...facts, blob: file.blob, ...analysis };
  });
  const roles = { source: 0, test: 0, config: 0, docs: 0, ci: 0, other: 0 };
  for (const file of files) roles[file.role]++;
  const capsule: RepoCapsule = {
    version: 1,
    repoId: repo.repoId,
    head,
    unstaged,
    roles,
    ...detectStack(manifestTexts),
    files,
  };
  try {
    await writeCache(cacheDir, capsule);
  } catch (error) {
    return err(indexError('io', `cannot write the index cache in ${cacheDir}: ${(error as Error).message}`));
  }
  const reused = listed.filter(
    (file) => isRegularFile(file) && cache.has(entryKey(file.blob, pathFacts(file.path).language)),
  );
  return ok({ capsule, cacheDir, stats: { files: files.length, parsed, reused: reused.length } });
}
