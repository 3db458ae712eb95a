/**
 * The detected stack and its commands, from manifest files (package.json,
 * pyproject.toml, go.mod, Cargo.toml, Makefile). A manifest is the
 * repository's text — untrusted — so package.json is decoded with io-ts and
 * the others are read line by line for a few known shapes; anything else is
 * left out rather than guessed.
 */
import * as t from 'io-ts';

export type Ecosystem = 'node' | 'python' | 'go' | 'rust' | 'make';

export interface StackEntry {
  readonly ecosystem: Ecosystem;
  /** The manifest that shows it. */
  readonly manifest: string;
  /** Notable tools the manifest names (test runners, compilers), sorted. */
  readonly tools: readonly string[];
}

export interface StackReport {
  readonly stack: readonly StackEntry[];
  /** Commands to run the tests and the build, from the root manifests, most specific first. */
  readonly testCommands: readonly string[];
  readonly buildCommands: readonly string[];
}

/** The files whose text the stack detector reads (by base name). */
export const MANIFEST_NAMES: ReadonlySet<string> = new Set([
  'package.json',
  'pyproject.toml',
  'requirements.txt',
  'setup.py',
  'go.mod',
  'Cargo.toml',
  'Makefile',
]);

const PackageJson = t.partial({
  scripts: t.record(t.string, t.string),
  dependencies: t.record(t.string, t.string),
  devDependencies: t.record(t.string, t.string),
  packageManager: t.string,
});

const NODE_TOOLS = [
  'vitest',
  'jest',
  'mocha',
  'typescript',
  'tsup',
  'esbuild',
  'vite',
  'turbo',
  'webpack',
  'eslint',
  '@biomejs/biome',
];
const PYTHON_TOOLS = ['pytest', 'tox', 'nox', 'mypy', 'ruff', 'poetry', 'hatchling', 'setuptools', 'unittest'];

function nodeEntry(path: string, text: string): { entry: StackEntry; scripts: Record<string, string> } | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  const decoded = PackageJson.decode(raw);
  if (decoded._tag === 'Left') return null;
  const pkg = decoded.right;
  const names = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.devDependencies ?? {})]);
  const tools = NODE_TOOLS.filter((tool) => names.has(tool)).sort();
  return { entry: { ecosystem: 'node', manifest: path, tools }, scripts: pkg.scripts ?? {} };
}

const runner = (packageManager: string | undefined): string => {
  const name = packageManager?.split('@')[0];
  return name === 'pnpm' || name === 'yarn' || name === 'bun' ? name : 'npm';
};

function textEntry(path: string, name: string, text: string): StackEntry | null {
  if (name === 'go.mod') return /^module\s/m.test(text) ? { ecosystem: 'go', manifest: path, tools: [] } : null;
  if (name === 'Cargo.toml')
    return /^\[(?:package|workspace)\]/m.test(text) ? { ecosystem: 'rust', manifest: path, tools: [] } : null;
  if (name === 'Makefile') return { ecosystem: 'make', manifest: path, tools: [] };
  const lower = text.toLowerCase();
  const tools = PYTHON_TOOLS.filter((tool) => lower.includes(tool)).sort();
  return { ecosystem: 'python', manifest: path, tools };
}

function rootCommands(entry: StackEntry, text: string, scripts: Record<string, string>, pm: string) {
  const test: string[] = [];
  const build: string[] = [];
  if (entry.ecosystem === 'node') {
    if (scripts.test !== undefined) test.push(`${pm} test`);
    if (scripts.build !== undefined) build.push(`${pm} run build`);
  } else if (entry.ecosystem === 'python') {
    if (entry.tools.includes('pytest')) test.push('pytest');
  } else if (entry.ecosystem === 'go') {
    test.push('go test ./...');
    build.push('go build ./...');
  } else if (entry.ecosystem === 'rust') {
    test.push('cargo test');
    build.push('cargo build');
  } else if (entry.ecosystem === 'make') {
    if (/^test:/m.test(text)) test.push('make test');
    if (/^build:/m.test(text)) build.push('make build');
  }
  return { test, build };
}

/** `manifests`: path → text, for files whose base name is in MANIFEST_NAMES. */
export function detectStack(manifests: ReadonlyMap<string, string>): StackReport {
  const stack: StackEntry[] = [];
  const testCommands: string[] = [];
  const buildCommands: string[] = [];
  for (const [path, text] of [...manifests].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const name = path.slice(path.lastIndexOf('/') + 1);
    const node = name === 'package.json' ? nodeEntry(path, text) : null;
    const entry = name === 'package.json' ? (node?.entry ?? null) : textEntry(path, name, text);
    if (entry === null) continue;
    stack.push(entry);
    if (path.includes('/')) continue;
    const pm = node === null ? 'npm' : runner(packageManagerOf(text));
    const commands = rootCommands(entry, text, node?.scripts ?? {}, pm);
    testCommands.push(...commands.test);
    buildCommands.push(...commands.build);
  }
  return { stack, testCommands, buildCommands };
}

function packageManagerOf(text: string): string | undefined {
  try {
    const decoded = PackageJson.decode(JSON.parse(text));
    return decoded._tag === 'Right' ? decoded.right.packageManager : undefined;
  } catch {
    return undefined;
  }
}
