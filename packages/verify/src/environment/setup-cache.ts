/**
 * The setup cache: `$CRUSTCORE_HOME/environments/<key>/tree`, one directory
 * per (manifests + lockfile + setup argv + scripts decision + toolchain)
 * hash. A directory appears there only by an atomic rename once its setup
 * succeeded, so a reader never sees a half-installed tree; it is bound
 * read-only into every verify run that uses it.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, normalize } from 'node:path';
import type { NodeEcosystem } from './ecosystems.js';
import type { TreeReader } from './tree-reader.js';

export const environmentsDir = (home: string): string => join(home, 'environments');
export const setupCacheDir = (home: string, key: string): string => join(environmentsDir(home), key);
/** Written last, inside the renamed directory: its presence is the cache hit. */
export const SETUP_RECORD = 'setup.json';

export interface SetupInputs {
  readonly argv: readonly string[];
  readonly allowInstallScripts: boolean;
  /** Node version the install ran under (native modules and engines checks depend on it). */
  readonly runtime: string;
  /** Relative path → text of every manifest and the lockfile. */
  readonly files: ReadonlyMap<string, string>;
}

/** The manifests and lockfile of a Node project, as the setup will see them. */
export async function nodeSetupFiles(tree: TreeReader, ecosystem: NodeEcosystem): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const names = [
    ecosystem.lockfile,
    ...ecosystem.workspaces.map((dir) => (dir === '.' ? 'package.json' : `${dir}/package.json`)),
  ];
  // A project .npmrc changes what gets installed (registry scopes, flags); it is input too.
  names.push('.npmrc');
  for (const name of names) {
    if (name === null) continue;
    const text = await tree.readText(name);
    if (text !== null) files.set(name, text);
  }
  for (const dir of ecosystem.workspaces) {
    const manifest = files.get(dir === '.' ? 'package.json' : `${dir}/package.json`) ?? null;
    for (const local of localDependencyPaths(manifest, dir)) await copyLocalTree(tree, local, files);
  }
  return files;
}

const MAX_LOCAL_FILES = 500;

/** `file:` dependencies inside the repository (relative to the root): the setup installs them from the copy. */
function localDependencyPaths(manifest: string | null, dir: string): string[] {
  if (manifest === null) return [];
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(manifest) as Record<string, unknown>;
  } catch {
    return [];
  }
  const paths: string[] = [];
  for (const field of ['dependencies', 'devDependencies', 'optionalDependencies']) {
    const entries = parsed[field];
    if (typeof entries !== 'object' || entries === null) continue;
    for (const spec of Object.values(entries)) {
      if (typeof spec !== 'string' || !spec.startsWith('file:')) continue;
      const joined = normalize(join(dir, spec.slice('file:'.length)));
      if (!joined.startsWith('..') && !isAbsolute(joined)) paths.push(joined);
    }
  }
  return paths;
}

/** Copies a local dependency (a file or a directory, without its node_modules) into `files`. */
async function copyLocalTree(tree: TreeReader, path: string, files: Map<string, string>): Promise<void> {
  const text = await tree.readText(path);
  if (text !== null) {
    files.set(path, text);
    return;
  }
  for (const name of await tree.listDirectory(path)) {
    if (name === 'node_modules' || files.size >= MAX_LOCAL_FILES) continue;
    await copyLocalTree(tree, `${path}/${name}`, files);
  }
}

/** Content address of a setup: every input, length-prefixed so no two input sets collide. */
export function setupKey(inputs: SetupInputs): string {
  const hash = createHash('sha256');
  const field = (label: string, value: string): void => {
    hash.update(`${label}\u0000${Buffer.byteLength(value)}\u0000`).update(value);
  };
  field('v', 'crustcore-setup-1');
  field('argv', JSON.stringify(inputs.argv));
  field('scripts', inputs.allowInstallScripts ? 'allowed' : 'off');
  field('runtime', inputs.runtime);
  for (const [name, text] of [...inputs.files.entries()].sort(([a], [b]) => (a < b ? -1 : 1)))
    field(`file:${name}`, text);
  return hash.digest('hex');
}

export interface SetupRecord {
  readonly key: string;
  readonly argv: readonly string[];
  readonly allowInstallScripts: boolean;
  readonly durationMs: number;
}

/** The record of a finished setup, or null when the key has none (a miss). */
export function readSetupRecord(home: string, key: string): SetupRecord | null {
  const path = join(setupCacheDir(home, key), SETUP_RECORD);
  if (!existsSync(path)) return null;
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<SetupRecord>;
    return parsed.key === key ? (parsed as SetupRecord) : null;
  } catch {
    return null;
  }
}
