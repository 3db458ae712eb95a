/**
 * The environment a worker or verify run gets: the project's dependencies
 * and the user's toolchain, read-only. Default: the user's own installed
 * dependencies, bound in place, when they match the tree under test.
 * Otherwise (not installed, or the patch changed a manifest or lockfile) a
 * setup in the `setup` profile, cached by content. The result has a hash
 * that the VerifiedPatch carries, so evidence names what the tests ran
 * against.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { err, ok, type Result } from '@crustcore/kernel';
import type { EnvironmentBindsRequest } from '@crustcore/sandbox';
import { defaultSandboxPath } from '@crustcore/sandbox';
import { detectEcosystems, type EcosystemReport, type NodeEcosystem, type PythonEcosystem } from './ecosystems.js';
import { extraFilesHash } from './extra-files.js';
import { checkNodeInstalled, nodeModulesBindPath, pythonLocksMatch, venvStateHash } from './installed.js';
import type { ProgressSink } from './progress.js';
import { readEnvironmentConfig } from './project-config.js';
import { defaultSetupArgv, runSetup, type SetupResult } from './setup-run.js';
import { resolveToolchain } from './toolchain.js';
import { directoryTree, type TreeReader } from './tree-reader.js';

export type EnvironmentMode = 'none' | 'installed' | 'setup';

export interface PreparedEnvironment {
  /** How the Node dependencies were provided (`none` when the project has none or none could be). */
  readonly mode: EnvironmentMode;
  /** sha256 over everything the runs will see of the environment. */
  readonly hash: string;
  readonly binds: EnvironmentBindsRequest;
  /** Ignored files to copy from the checkout into each worktree. */
  readonly files: readonly string[];
  readonly report: EcosystemReport;
  readonly setup: SetupResult | null;
  /** Plain sentences for people: what was bound, what could not be provided. */
  readonly notes: readonly string[];
  /** PATH inside a sandbox whose worktree is `worktreeRoot`. */
  pathFor(worktreeRoot: string): string;
}

export interface PrepareEnvironmentOptions {
  /** The user's checkout (installed dependencies, config, venv). */
  readonly userRoot: string;
  /** The files under test: the base commit for the worker, the patched worktree for verify. */
  readonly tree: TreeReader;
  readonly home: string;
  /** The user's environment (PATH, HOME, PYENV_VERSION) for resolving tools. */
  readonly env: NodeJS.ProcessEnv;
  /** `--setup ARGV`; overrides the project config. */
  readonly setupArgv?: readonly string[] | null;
  /** A person approved dependency install scripts for this run. */
  readonly allowInstallScripts?: boolean;
  /** The user's npm registry, or how to ask for it (asked only when a setup actually runs). */
  readonly registryUrl: string | (() => Promise<string>);
  readonly npmCacheDir?: string;
  readonly progress?: ProgressSink;
  readonly signal?: AbortSignal;
}

export interface EnvironmentError {
  readonly _tag: 'EnvironmentError';
  readonly message: string;
  readonly output: string;
}

const environmentError = (message: string, output = ''): EnvironmentError => ({
  _tag: 'EnvironmentError',
  message,
  output,
});

interface NodePart {
  readonly mode: EnvironmentMode;
  readonly worktree: { source: string; path: string }[];
  readonly identity: string;
  readonly setup: SetupResult | null;
}

async function provideNode(
  options: PrepareEnvironmentOptions,
  user: TreeReader,
  ecosystem: NodeEcosystem,
  notes: string[],
  setupArgv: readonly string[] | null,
  allowInstallScripts: boolean,
): Promise<Result<EnvironmentError, NodePart>> {
  const installed = await checkNodeInstalled(options.userRoot, user, options.tree, ecosystem);
  if (installed.matches) {
    const worktree = installed.installedDirs.map((dir) => ({
      source: join(options.userRoot, nodeModulesBindPath(dir)),
      path: nodeModulesBindPath(dir),
    }));
    notes.push(
      `node_modules from the checkout, read-only (${worktree.length} director${worktree.length === 1 ? 'y' : 'ies'})`,
    );
    return ok({ mode: 'installed', worktree, identity: `installed:${installed.stateHash}`, setup: null });
  }
  if (!(await declaresDependencies(options.tree, ecosystem))) {
    return ok({ mode: 'none', worktree: [], identity: 'none', setup: null });
  }
  if (setupArgv === null && defaultSetupArgv(ecosystem, allowInstallScripts) === null) {
    const why =
      ecosystem.kind === 'npm'
        ? 'there is no lockfile to install from'
        : `${ecosystem.kind} setup is not supported yet`;
    notes.push(`${installed.reason} and ${why}: install the dependencies, or pass --setup`);
    return ok({ mode: 'none', worktree: [], identity: 'none', setup: null });
  }
  notes.push(`${installed.reason}: running setup`);
  const setup = await runSetup({
    home: options.home,
    ecosystem,
    tree: options.tree,
    argv: setupArgv,
    allowInstallScripts,
    registryUrl: typeof options.registryUrl === 'string' ? options.registryUrl : await options.registryUrl(),
    ...(options.npmCacheDir === undefined ? {} : { npmCacheDir: options.npmCacheDir }),
    ...(options.progress === undefined ? {} : { progress: options.progress }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  if (setup._tag === 'Left') return err(environmentError(setup.left.message, setup.left.output));
  const setupTree = directoryTree(setup.right.treeDir);
  const worktree: { source: string; path: string }[] = [];
  for (const dir of ecosystem.workspaces) {
    const path = nodeModulesBindPath(dir);
    const listed = await setupTree.listDirectory(path);
    if (listed.length > 0) worktree.push({ source: join(setup.right.treeDir, path), path });
  }
  notes.push(
    `dependencies from setup ${setup.right.key.slice(0, 12)} (${setup.right.hit ? 'cache hit' : 'installed now'})`,
  );
  return ok({ mode: 'setup', worktree, identity: `setup:${setup.right.key}`, setup: setup.right });
}

/** Whether any manifest of the project names a dependency (a project with none needs no install). */
async function declaresDependencies(tree: TreeReader, ecosystem: NodeEcosystem): Promise<boolean> {
  for (const dir of ecosystem.workspaces) {
    const text = await tree.readText(dir === '.' ? 'package.json' : `${dir}/package.json`);
    if (text === null) continue;
    try {
      const manifest = JSON.parse(text) as Record<string, unknown>;
      for (const field of ['dependencies', 'devDependencies', 'optionalDependencies']) {
        const entries = manifest[field];
        if (typeof entries === 'object' && entries !== null && Object.keys(entries).length > 0) return true;
      }
    } catch {
      return true;
    }
  }
  return false;
}

async function providePython(
  options: PrepareEnvironmentOptions,
  user: TreeReader,
  ecosystem: PythonEcosystem,
  notes: string[],
): Promise<{ worktree: { source: string; path: string }[]; tools: string[]; identity: string }> {
  if (ecosystem.venv === null) return { worktree: [], tools: [], identity: 'python:none' };
  const venv = join(options.userRoot, ecosystem.venv);
  const changed = await pythonLocksMatch(user, options.tree, ecosystem);
  if (changed !== null)
    notes.push(`${changed}; CrustCore cannot set up Python yet, so the checkout's ${ecosystem.venv} is used as it is`);
  notes.push(`${ecosystem.venv} from the checkout, read-only`);
  // Scripts in a venv name their interpreter by absolute path: the venv is visible at its own path too.
  return {
    worktree: [{ source: venv, path: ecosystem.venv }],
    tools: [venv],
    identity: `venv:${venvStateHash(venv)}`,
  };
}

/** Detects, checks and (when needed) sets up the environment for one tree. */
export async function prepareEnvironment(
  options: PrepareEnvironmentOptions,
): Promise<Result<EnvironmentError, PreparedEnvironment>> {
  const config = readEnvironmentConfig(options.userRoot);
  if (config._tag === 'Left') return err(environmentError(config.left.message));
  const user = directoryTree(options.userRoot);
  const report = await detectEcosystems(options.tree, user);
  const notes: string[] = [...report.unsupported];
  const setupArgv = options.setupArgv ?? config.right.setup ?? null;
  const allowInstallScripts = options.allowInstallScripts ?? config.right.allowInstallScripts ?? false;
  const worktree: { source: string; path: string }[] = [];
  const tools: string[] = [];
  const identity: string[] = [];
  let mode: EnvironmentMode = 'none';
  let setup: SetupResult | null = null;
  let venvDirectory: string | null = null;
  for (const ecosystem of report.ecosystems) {
    if (ecosystem.kind === 'python') {
      const python = await providePython(options, user, ecosystem, notes);
      worktree.push(...python.worktree);
      tools.push(...python.tools);
      identity.push(python.identity);
      venvDirectory = ecosystem.venv === null ? null : join(options.userRoot, ecosystem.venv);
      continue;
    }
    const node = await provideNode(options, user, ecosystem, notes, setupArgv, allowInstallScripts);
    if (node._tag === 'Left') return node;
    worktree.push(...node.right.worktree);
    identity.push(node.right.identity);
    mode = node.right.mode;
    setup = node.right.setup;
  }
  const toolchain = resolveToolchain({ projectRoot: options.userRoot, env: options.env, venvDirectory });
  tools.push(...toolchain.directories);
  const files = config.right.files ?? [];
  identity.push(`tools:${JSON.stringify(toolchain.resolved)}`, `files:${extraFilesHash(options.userRoot, files)}`);
  const hash = createHash('sha256').update(identity.join('\n')).digest('hex');
  const binPaths = worktree
    .map((bind) => ({ bind, bin: bind.path.endsWith('node_modules') ? '.bin' : 'bin' }))
    .filter(({ bind, bin }) => existsSync(join(bind.source, bin)))
    .map(({ bind, bin }) => `${bind.path}/${bin}`);
  return ok({
    mode,
    hash,
    binds: { worktree, tools: [...new Set(tools)] },
    files,
    report,
    setup,
    notes,
    pathFor: (worktreeRoot) =>
      [...binPaths.map((bin) => `${worktreeRoot}/${bin}`), ...toolchain.pathEntries, defaultSandboxPath()].join(':'),
  });
}
