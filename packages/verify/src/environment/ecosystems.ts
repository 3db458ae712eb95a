/**
 * Which package ecosystems a project uses, read from its manifests. Only
 * what CrustCore can provide is marked supported; everything else is named
 * in plain words so the user knows why a verify cannot find its imports.
 */
import type { TreeReader } from './tree-reader.js';

export type EcosystemKind = 'npm' | 'pnpm' | 'yarn' | 'python';

export interface NodeEcosystem {
  readonly kind: 'npm' | 'pnpm' | 'yarn';
  /** Lockfile name at the root (`package-lock.json`, `pnpm-lock.yaml`, `yarn.lock`), or null. */
  readonly lockfile: string | null;
  /** Workspace directories relative to the root, the root itself ('.') first. */
  readonly workspaces: readonly string[];
}

export interface PythonEcosystem {
  readonly kind: 'python';
  /** The virtual environment directory relative to the root (`.venv`, `venv`), or null. */
  readonly venv: string | null;
  /** Which tool's lock the project keeps: uv, poetry, pip requirements, or none. */
  readonly tool: 'uv' | 'poetry' | 'pip' | 'none';
  /** Files whose change means the dependencies changed. */
  readonly lockfiles: readonly string[];
}

export type Ecosystem = NodeEcosystem | PythonEcosystem;

export interface EcosystemReport {
  readonly ecosystems: readonly Ecosystem[];
  /** Plain sentences: what was found that CrustCore cannot provide yet. */
  readonly unsupported: readonly string[];
}

const NODE_LOCKFILES = [
  ['package-lock.json', 'npm'],
  ['npm-shrinkwrap.json', 'npm'],
  ['pnpm-lock.yaml', 'pnpm'],
  ['yarn.lock', 'yarn'],
] as const;
const PYTHON_LOCKS = ['uv.lock', 'poetry.lock', 'requirements.txt', 'requirements-dev.txt', 'pyproject.toml'];
const VENV_NAMES = ['.venv', 'venv'];
const OTHER_MANIFESTS: readonly (readonly [string, string])[] = [
  ['Cargo.toml', 'Rust (Cargo)'],
  ['go.mod', 'Go modules'],
  ['Gemfile', 'Ruby (Bundler)'],
  ['composer.json', 'PHP (Composer)'],
  ['pom.xml', 'Java (Maven)'],
  ['build.gradle', 'Java (Gradle)'],
];
const MAX_WORKSPACES = 200;

function parseJson(text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** The `workspaces` patterns of a package.json (array form or `{ packages: [...] }`). */
function workspacePatterns(manifest: Record<string, unknown>): string[] {
  const field = manifest.workspaces;
  const list = Array.isArray(field) ? field : (field as { packages?: unknown } | undefined)?.packages;
  return Array.isArray(list) ? list.filter((entry): entry is string => typeof entry === 'string') : [];
}

/** Expands `dir/*` and plain `dir` patterns; anything else is reported. */
async function expandWorkspaces(
  tree: TreeReader,
  patterns: readonly string[],
  unsupported: string[],
): Promise<string[]> {
  const found: string[] = [];
  for (const raw of patterns) {
    const pattern = raw.replace(/^\.\//, '').replace(/\/$/, '');
    if (pattern.includes('..') || pattern.startsWith('/')) {
      unsupported.push(`workspace pattern "${raw}" leaves the repository; it is ignored`);
      continue;
    }
    const star = /^([^*?[\]{}!]*)\/\*$/.exec(pattern);
    if (star !== null) {
      const parent = star[1] as string;
      for (const name of await tree.listDirectory(parent)) {
        const dir = `${parent}/${name}`;
        if ((await tree.readText(`${dir}/package.json`)) !== null) found.push(dir);
      }
    } else if (!/[*?[\]{}!]/.test(pattern)) {
      if ((await tree.readText(`${pattern}/package.json`)) !== null) found.push(pattern);
    } else {
      unsupported.push(`workspace pattern "${raw}" is not supported yet (only "dir" and "dir/*")`);
    }
  }
  return [...new Set(found)].sort().slice(0, MAX_WORKSPACES);
}

async function detectNode(tree: TreeReader, unsupported: string[]): Promise<NodeEcosystem | null> {
  const manifest = parseJson(await tree.readText('package.json'));
  if (manifest === null) return null;
  let kind: NodeEcosystem['kind'] = 'npm';
  let lockfile: string | null = null;
  for (const [name, tool] of NODE_LOCKFILES) {
    if ((await tree.readText(name)) !== null) {
      kind = tool;
      lockfile = name;
      break;
    }
  }
  if (kind !== 'npm')
    unsupported.push(`${kind}: installed node_modules are used, but CrustCore cannot run ${kind} setup yet`);
  if (lockfile === null)
    unsupported.push('package.json has no lockfile: setup needs one (run "npm install" and commit the lockfile)');
  const workspaces = await expandWorkspaces(tree, workspacePatterns(manifest), unsupported);
  return { kind, lockfile, workspaces: ['.', ...workspaces] };
}

async function detectPython(
  tree: TreeReader,
  userTree: TreeReader,
  unsupported: string[],
): Promise<PythonEcosystem | null> {
  const lockfiles: string[] = [];
  for (const name of PYTHON_LOCKS) if ((await tree.readText(name)) !== null) lockfiles.push(name);
  let venv: string | null = null;
  for (const name of VENV_NAMES)
    if (venv === null && (await userTree.readText(`${name}/pyvenv.cfg`)) !== null) venv = name;
  if (lockfiles.length === 0 && venv === null) return null;
  const tool = lockfiles.includes('uv.lock')
    ? 'uv'
    : lockfiles.includes('poetry.lock')
      ? 'poetry'
      : lockfiles.some((name) => name.startsWith('requirements'))
        ? 'pip'
        : 'none';
  if (venv === null) {
    unsupported.push('Python: no virtual environment (.venv) in the checkout; CrustCore cannot create one yet');
  }
  return { kind: 'python', venv, tool, lockfiles };
}

/**
 * Detects ecosystems in `tree` (the files under test). `userTree` is the
 * user's checkout, where installed environments (a `.venv`) live.
 */
export async function detectEcosystems(tree: TreeReader, userTree: TreeReader): Promise<EcosystemReport> {
  const unsupported: string[] = [];
  const ecosystems: Ecosystem[] = [];
  const node = await detectNode(tree, unsupported);
  if (node !== null) ecosystems.push(node);
  const python = await detectPython(tree, userTree, unsupported);
  if (python !== null) ecosystems.push(python);
  for (const [name, label] of OTHER_MANIFESTS) {
    if ((await tree.readText(name)) !== null) unsupported.push(`${label} (${name}) is not supported yet`);
  }
  return { ecosystems, unsupported };
}

/** Paths whose change in a patch means the dependencies changed. */
export function dependencyFiles(report: EcosystemReport): readonly string[] {
  const files = new Set<string>();
  for (const ecosystem of report.ecosystems) {
    if (ecosystem.kind === 'python') for (const name of ecosystem.lockfiles) files.add(name);
    else {
      if (ecosystem.lockfile !== null) files.add(ecosystem.lockfile);
      for (const dir of ecosystem.workspaces) files.add(dir === '.' ? 'package.json' : `${dir}/package.json`);
    }
  }
  return [...files].sort();
}
