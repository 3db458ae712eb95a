/**
 * Whether the user's checkout already has the dependencies the tree under
 * test needs: the lockfile and every manifest's dependency fields equal,
 * and the install present. Then they are bound as they are — no copy, no
 * install — which is what makes the default fast.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { NodeEcosystem, PythonEcosystem } from './ecosystems.js';
import type { TreeReader } from './tree-reader.js';

const DEPENDENCY_FIELDS = [
  'dependencies',
  'devDependencies',
  'optionalDependencies',
  'peerDependencies',
  'bundleDependencies',
  'overrides',
  'workspaces',
];

/** The parts of a package.json that decide what gets installed, as canonical text. */
export function dependencyFieldsOf(text: string | null): string {
  if (text === null) return 'absent';
  try {
    const manifest = JSON.parse(text) as Record<string, unknown>;
    return JSON.stringify(DEPENDENCY_FIELDS.map((field) => [field, manifest[field] ?? null]));
  } catch {
    return `unparsable:${text}`;
  }
}

const isDirectory = (path: string): boolean => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};

export interface InstalledCheck {
  readonly matches: boolean;
  /** Why not, in words (empty when it matches). */
  readonly reason: string;
  /** Workspace directories (relative) that have a node_modules in the checkout. */
  readonly installedDirs: readonly string[];
  /** Identity of the installed state (npm's hidden lockfile when present). */
  readonly stateHash: string;
}

const manifestPath = (dir: string): string => (dir === '.' ? 'package.json' : `${dir}/package.json`);
const modulesPath = (dir: string): string => (dir === '.' ? 'node_modules' : `${dir}/node_modules`);

export async function checkNodeInstalled(
  userRoot: string,
  user: TreeReader,
  tree: TreeReader,
  ecosystem: NodeEcosystem,
): Promise<InstalledCheck> {
  const no = (reason: string): InstalledCheck => ({ matches: false, reason, installedDirs: [], stateHash: '' });
  if (!isDirectory(join(userRoot, 'node_modules'))) return no('node_modules is not installed in the checkout');
  if (
    ecosystem.lockfile !== null &&
    (await user.readText(ecosystem.lockfile)) !== (await tree.readText(ecosystem.lockfile))
  )
    return no(`${ecosystem.lockfile} differs from the tree under test`);
  for (const dir of ecosystem.workspaces) {
    const mine = dependencyFieldsOf(await user.readText(manifestPath(dir)));
    if (mine !== dependencyFieldsOf(await tree.readText(manifestPath(dir))))
      return no(`the dependencies in ${manifestPath(dir)} differ from the tree under test`);
  }
  const installedDirs = ecosystem.workspaces.filter((dir) => isDirectory(join(userRoot, modulesPath(dir))));
  const hidden = join(userRoot, 'node_modules', '.package-lock.json');
  const state = createHash('sha256');
  if (existsSync(hidden)) state.update(readFileSync(hidden));
  else state.update((await user.readText(ecosystem.lockfile ?? 'package.json')) ?? '');
  return { matches: true, reason: '', installedDirs, stateHash: state.digest('hex') };
}

export const nodeModulesBindPath = modulesPath;

/** A venv's identity: its config and the distributions installed in it (names and versions). */
export function venvStateHash(venvDirectory: string): string {
  const hash = createHash('sha256');
  try {
    hash.update(readFileSync(join(venvDirectory, 'pyvenv.cfg')));
  } catch {
    hash.update('no-pyvenv.cfg');
  }
  const lib = join(venvDirectory, 'lib');
  for (const python of safeList(lib).sort()) {
    const site = join(lib, python, 'site-packages');
    for (const entry of safeList(site)
      .filter((name) => name.endsWith('.dist-info'))
      .sort())
      hash.update(`\n${entry}`);
  }
  return hash.digest('hex');
}

function safeList(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

export async function pythonLocksMatch(
  user: TreeReader,
  tree: TreeReader,
  ecosystem: PythonEcosystem,
): Promise<string | null> {
  for (const name of ecosystem.lockfiles) {
    const mine = await user.readText(name);
    const theirs = await tree.readText(name);
    if (name === 'pyproject.toml' ? pyprojectDependencies(mine) !== pyprojectDependencies(theirs) : mine !== theirs)
      return `${name} differs from the tree under test`;
  }
  return null;
}

/** The dependency lines of a pyproject.toml (a patch editing only its tool config keeps the venv valid). */
function pyprojectDependencies(text: string | null): string {
  if (text === null) return 'absent';
  const match = /^\s*(?:dependencies|requires)\s*=\s*\[[\s\S]*?\]/gm;
  return (text.match(match) ?? []).join('\n');
}
