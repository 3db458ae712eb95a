/**
 * Finds a worker CLI's native executable on the host and the directory to
 * bind into the sandbox for it. Both CLIs ship as npm packages whose `bin`
 * entry is a launcher (a Node script for Codex, a copied binary for Claude
 * Code); the real program lives in a platform-specific optional dependency.
 * The sandbox sees only what is bound, so we resolve symlinks to real paths
 * and bind the smallest directory that holds the program and its helpers.
 */
import { accessSync, closeSync, constants, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { err, ok, type Result } from '@crustcore/kernel';

/** The two external worker CLIs CrustCore drives. */
export type WorkerCliName = 'codex' | 'claude';

/** A worker CLI found on this host. Paths are real (symlinks resolved). */
export interface WorkerCli {
  readonly name: WorkerCliName;
  /** The native executable on the host. */
  readonly executable: string;
  /** Host directory bound read-only into the sandbox; contains `executable`. */
  readonly mountSource: string;
  /** `executable` relative to `mountSource`. */
  readonly executableInMount: string;
  /** Directories relative to `mountSource` the CLI expects on PATH (Codex's bundled ripgrep). */
  readonly pathDirectoriesInMount: readonly string[];
  /** The npm package root it came from, when known (for messages). */
  readonly packageRoot: string | null;
}

/** Why a CLI could not be used. */
export interface WorkerCliMissing {
  readonly _tag: 'WorkerCliMissing';
  readonly name: WorkerCliName;
  readonly message: string;
  /** The command that installs it. */
  readonly fix: string;
}

/** How to install each CLI (also printed by `crustcore doctor`). */
export const WORKER_CLI_INSTALL: Readonly<Record<WorkerCliName, string>> = Object.freeze({
  codex: 'npm install -g @openai/codex',
  claude: 'npm install -g @anthropic-ai/claude-code',
});

const PACKAGE_OF: Readonly<Record<WorkerCliName, string>> = {
  codex: '@openai/codex',
  claude: '@anthropic-ai/claude-code',
};

/** Codex's native build for this machine: [target triple, platform package]. */
function codexTarget(): readonly [string, string] | null {
  if (process.platform !== 'linux') return null;
  if (process.arch === 'x64') return ['x86_64-unknown-linux-musl', '@openai/codex-linux-x64'];
  if (process.arch === 'arm64') return ['aarch64-unknown-linux-musl', '@openai/codex-linux-arm64'];
  return null;
}

/** Claude Code's platform packages for this machine, glibc first. */
function claudePlatformPackages(): readonly string[] {
  if (process.platform !== 'linux') return [];
  const arch = process.arch === 'x64' ? 'x64' : process.arch === 'arm64' ? 'arm64' : null;
  if (arch === null) return [];
  return [`@anthropic-ai/claude-code-linux-${arch}`, `@anthropic-ai/claude-code-linux-${arch}-musl`];
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** True for an ELF binary (not a script or a placeholder stub). */
function isElf(path: string): boolean {
  let fd: number | null = null;
  try {
    fd = openSync(path, 'r');
    const head = Buffer.alloc(4);
    return readSync(fd, head, 0, 4, 0) === 4 && head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  } catch {
    return false;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

function realOrNull(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

/** Resolves `request` (a package's package.json) as Node would from `fromFile`. */
function resolveFrom(fromFile: string, request: string): string | null {
  try {
    return realOrNull(createRequire(fromFile).resolve(request));
  } catch {
    return null;
  }
}

/** Package roots to try: the one next to CrustCore's own install, then the one behind `name` on PATH. */
function candidatePackageRoots(name: WorkerCliName, searchPath: string | undefined): string[] {
  const roots: string[] = [];
  const manifest = resolveFrom(import.meta.url, `${PACKAGE_OF[name]}/package.json`);
  if (manifest !== null) roots.push(dirname(manifest));
  for (const directory of (searchPath ?? '').split(':')) {
    if (!directory.startsWith('/')) continue;
    const launcher = realOrNull(join(directory, name));
    if (launcher === null || !isExecutableFile(launcher)) continue;
    // npm links `bin/<name>` of the package; its package root is one level up from `bin/`.
    if (basename(dirname(launcher)) === 'bin') roots.push(dirname(dirname(launcher)));
  }
  return [...new Set(roots)];
}

function codexFromPackage(packageRoot: string): WorkerCli | null {
  const target = codexTarget();
  if (target === null) return null;
  const [triple, platformPackage] = target;
  const platformManifest = resolveFrom(join(packageRoot, 'package.json'), `${platformPackage}/package.json`);
  const vendorRoots = [
    ...(platformManifest === null ? [] : [join(dirname(platformManifest), 'vendor')]),
    join(packageRoot, 'vendor'),
  ];
  for (const vendor of vendorRoots) {
    const mountSource = realOrNull(join(vendor, triple));
    if (mountSource === null) continue;
    const executable = join(mountSource, 'bin', 'codex');
    if (!isExecutableFile(executable)) continue;
    const pathDirectoriesInMount = isExecutableFile(join(mountSource, 'codex-path', 'rg')) ? ['codex-path'] : [];
    return {
      name: 'codex',
      executable,
      mountSource,
      executableInMount: 'bin/codex',
      pathDirectoriesInMount,
      packageRoot,
    };
  }
  return null;
}

function claudeFromPackage(packageRoot: string): WorkerCli | null {
  // The postinstall step copies the native binary over bin/claude.exe; without it, the platform package holds it.
  const candidates = [join(packageRoot, 'bin', 'claude.exe')];
  for (const platformPackage of claudePlatformPackages()) {
    const manifest = resolveFrom(join(packageRoot, 'package.json'), `${platformPackage}/package.json`);
    if (manifest !== null) candidates.push(join(dirname(manifest), 'claude'));
  }
  for (const candidate of candidates) {
    const executable = realOrNull(candidate);
    if (executable === null || !isExecutableFile(executable) || !isElf(executable)) continue;
    return {
      name: 'claude',
      executable,
      mountSource: dirname(executable),
      executableInMount: basename(executable),
      pathDirectoriesInMount: [],
      packageRoot,
    };
  }
  return null;
}

/** Options for finding a CLI. */
export interface LocateOptions {
  /** The host PATH to search after CrustCore's own node_modules (default: process.env.PATH). */
  readonly searchPath?: string;
  /** An explicit native executable; skips the search. */
  readonly executable?: string;
}

/**
 * Finds `name` on this host. Left when it is not installed (or only as a
 * launcher without its native binary), with the install command.
 */
export function locateWorkerCli(name: WorkerCliName, options: LocateOptions = {}): Result<WorkerCliMissing, WorkerCli> {
  const missing = (message: string) =>
    err<WorkerCliMissing>({ _tag: 'WorkerCliMissing', name, message, fix: WORKER_CLI_INSTALL[name] });
  if (options.executable !== undefined) {
    const executable = realOrNull(options.executable);
    if (executable === null || !isExecutableFile(executable) || !isElf(executable)) {
      return missing(`${options.executable} is not a native ${name} executable`);
    }
    return ok({
      name,
      executable,
      mountSource: dirname(executable),
      executableInMount: basename(executable),
      pathDirectoriesInMount: [],
      packageRoot: null,
    });
  }
  if (process.platform !== 'linux') return missing(`the ${name} worker runs only on Linux (bubblewrap sandbox)`);
  for (const root of candidatePackageRoots(name, options.searchPath ?? process.env.PATH)) {
    const found = name === 'codex' ? codexFromPackage(root) : claudeFromPackage(root);
    if (found !== null) return ok(found);
  }
  return missing(`${name} is not installed (no ${PACKAGE_OF[name]} with a native binary for ${process.arch})`);
}
