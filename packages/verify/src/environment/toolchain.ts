/**
 * The user's toolchain, resolved as on the host: the interpreter a
 * project's `.venv` was made from (a pyenv version, a python.org build),
 * nvm's node, `~/.local/bin`. Each directory outside the system roots the
 * sandbox already shows is bound read-only at its own path, and PATH inside
 * lists them in the host's order, so `python`, `pytest` and `node` are the
 * user's, not Debian's.
 */
import { accessSync, constants, existsSync, readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** What a run needs to see of the user's tools. */
export interface Toolchain {
  /** Host directories to bind read-only at their own path. */
  readonly directories: readonly string[];
  /** PATH entries to put before the sandbox default (inside paths). */
  readonly pathEntries: readonly string[];
  /** What was resolved, for people (`python3 → /root/.pyenv/versions/3.12.1/bin/python3.12`). */
  readonly resolved: readonly string[];
}

/** The sandbox already shows these (see @crustcore/sandbox host-layout). */
const SYSTEM_ROOTS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'];
const TOOL_NAMES = ['node', 'python3', 'python'];

const inside = (path: string, root: string): boolean => path === root || path.startsWith(`${root}/`);
const isSystem = (path: string): boolean => SYSTEM_ROOTS.some((root) => inside(path, root));

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function realOrNull(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

/** The install prefix of a binary: `/x/versions/3.12/bin/python` → `/x/versions/3.12`. */
function prefixOf(binary: string): string {
  const bin = dirname(binary);
  return basename(bin) === 'bin' ? dirname(bin) : bin;
}

/** pyenv's shims are scripts; the version they pick is named in files pyenv reads. */
function pyenvVersionDirectory(shim: string, projectRoot: string, env: NodeJS.ProcessEnv): string | null {
  const pyenvRoot = dirname(dirname(shim));
  const candidates = [
    env.PYENV_VERSION,
    readFirstLine(join(projectRoot, '.python-version')),
    readFirstLine(join(pyenvRoot, 'version')),
  ];
  for (const version of candidates) {
    if (version === undefined || version === null || version === '' || version === 'system') continue;
    if (!/^[A-Za-z0-9._-]+$/.test(version)) continue;
    const directory = join(pyenvRoot, 'versions', version);
    if (existsSync(join(directory, 'bin'))) return directory;
  }
  return null;
}

function readFirstLine(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').split('\n')[0]?.trim() ?? null;
  } catch {
    return null;
  }
}

/** The `home` of a venv's pyvenv.cfg: the interpreter the venv runs. */
export function venvBaseInterpreterDirectory(venvDirectory: string): string | null {
  let text: string;
  try {
    text = readFileSync(join(venvDirectory, 'pyvenv.cfg'), 'utf8');
  } catch {
    return null;
  }
  const home = /^home\s*=\s*(.+)$/m.exec(text)?.[1]?.trim();
  if (home === undefined || !home.startsWith('/')) return null;
  return realOrNull(home);
}

interface Collected {
  directories: Set<string>;
  pathEntries: string[];
  resolved: string[];
}

function addTool(collected: Collected, name: string, found: string, projectRoot: string, env: NodeJS.ProcessEnv): void {
  let real = realOrNull(found);
  if (real === null) return;
  if (found.includes('/.pyenv/shims/')) {
    const version = pyenvVersionDirectory(found, projectRoot, env);
    if (version === null) return;
    real = join(version, 'bin', name);
  }
  collected.resolved.push(`${name} → ${real}`);
  if (isSystem(real)) return;
  const prefix = prefixOf(real);
  collected.directories.add(prefix);
  const bin = dirname(real);
  if (!collected.pathEntries.includes(bin)) collected.pathEntries.push(bin);
}

/**
 * Resolves the user's tools from the host PATH (in order) and from the
 * project's venv. `env` is the user's environment (PATH, HOME, PYENV_VERSION).
 */
export function resolveToolchain(options: {
  readonly projectRoot: string;
  readonly env: NodeJS.ProcessEnv;
  readonly venvDirectory?: string | null;
}): Toolchain {
  const collected: Collected = { directories: new Set(), pathEntries: [], resolved: [] };
  const path = (options.env.PATH ?? '').split(':').filter((entry) => entry.startsWith('/'));
  for (const name of TOOL_NAMES) {
    const found = path.map((directory) => join(directory, name)).find(executable);
    if (found !== undefined) addTool(collected, name, found, options.projectRoot, options.env);
  }
  const home = options.env.HOME;
  if (home?.startsWith('/')) {
    const localBin = join(home, '.local', 'bin');
    if (path.includes(localBin) && existsSync(localBin)) {
      const real = realOrNull(localBin);
      if (real !== null && !isSystem(real)) {
        collected.directories.add(real);
        collected.pathEntries.push(real);
      }
    }
  }
  if (options.venvDirectory !== undefined && options.venvDirectory !== null) {
    const base = venvBaseInterpreterDirectory(options.venvDirectory);
    if (base !== null && !isSystem(base)) {
      collected.directories.add(prefixOf(join(base, 'python')));
      collected.resolved.push(`venv base interpreter → ${base}`);
    }
  }
  return {
    directories: minimalDirectories([...collected.directories]),
    pathEntries: collected.pathEntries,
    resolved: collected.resolved,
  };
}

/** Drops directories inside another listed one (a bind of the parent already shows them). */
function minimalDirectories(directories: readonly string[]): string[] {
  const sorted = [...new Set(directories)].sort((a, b) => a.length - b.length);
  const kept: string[] = [];
  for (const directory of sorted) if (!kept.some((parent) => inside(directory, parent))) kept.push(directory);
  return kept;
}
