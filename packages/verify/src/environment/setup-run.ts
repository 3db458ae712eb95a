/**
 * Runs a dependency setup (`npm ci --ignore-scripts` by default) in the
 * `setup` sandbox profile: a copy of the manifests and lockfile as the
 * worktree, the registry the user's own npm config names as the only
 * network (through the allowlisting proxy and the in-sandbox bridge), a
 * CrustCore-owned npm cache, install scripts off unless a person approved
 * them. A success is renamed into the content-addressed setup cache.
 */
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { err, ok, type Result } from '@crustcore/kernel';
import { mintSandboxExecCap, runSandboxed, SETUP_PROXY_PORT, scriptNodeBinary } from '@crustcore/sandbox';
import type { NodeEcosystem } from './ecosystems.js';
import { type ProgressSink, withProgress } from './progress.js';
import { originOf, startRegistryProxy } from './registry-proxy.js';
import {
  environmentsDir,
  nodeSetupFiles,
  readSetupRecord,
  SETUP_RECORD,
  type SetupRecord,
  setupCacheDir,
  setupKey,
} from './setup-cache.js';
import type { TreeReader } from './tree-reader.js';

export interface SetupRequest {
  readonly home: string;
  readonly ecosystem: NodeEcosystem;
  /** The tree whose manifests are installed (the base, or a patched worktree). */
  readonly tree: TreeReader;
  /** Null: the detected default. */
  readonly argv: readonly string[] | null;
  readonly allowInstallScripts: boolean;
  /** From the user's own npm config (`npm config get registry`). */
  readonly registryUrl: string;
  /** Default `$CRUSTCORE_HOME/npm-cache`. */
  readonly npmCacheDir?: string;
  readonly progress?: ProgressSink;
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
}

export interface SetupResult {
  readonly key: string;
  /** The installed tree (bind `<dir>/<workspace>/node_modules`). */
  readonly treeDir: string;
  readonly hit: boolean;
  readonly record: SetupRecord;
  /** Connections the proxy refused during this setup (empty on a hit). */
  readonly refused: readonly string[];
}

export interface SetupError {
  readonly _tag: 'SetupError';
  readonly message: string;
  /** Tail of the setup's output, for people. */
  readonly output: string;
}

const setupError = (message: string, output = ''): SetupError => ({ _tag: 'SetupError', message, output });

/** The detected default: a clean install from the lockfile, with install scripts only when approved. */
export function defaultSetupArgv(ecosystem: NodeEcosystem, allowInstallScripts: boolean): readonly string[] | null {
  if (ecosystem.kind !== 'npm' || ecosystem.lockfile === null) return null;
  return allowInstallScripts ? ['npm', 'ci'] : ['npm', 'ci', '--ignore-scripts'];
}

/**
 * Host path of the setup bridge. The single executable carries its text (it has no files beside
 * it): written into this run's private directory. Otherwise assets/setup-bridge.mjs, from the
 * source tree or the build.
 */
function bridgeScriptPath(runDir: string): string {
  const embedded = (globalThis as { CRUSTCORE_SETUP_BRIDGE_SOURCE?: string }).CRUSTCORE_SETUP_BRIDGE_SOURCE;
  if (typeof embedded === 'string') {
    const path = join(runDir, 'setup-bridge.mjs');
    writeFileSync(path, embedded, { mode: 0o600, flag: 'wx' });
    return path;
  }
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [
    join(here, '..', '..', 'assets', 'setup-bridge.mjs'),
    join(here, '..', 'assets', 'setup-bridge.mjs'),
  ];
  return candidates.find((path) => existsSync(path)) ?? (candidates[0] as string);
}

const SANDBOX_PROXY_DIR = '/crustcore/proxy';
const SANDBOX_BRIDGE = '/crustcore/setup-bridge.mjs';
const SANDBOX_NPM_CACHE = '/crustcore/npm-cache';

/** Runs the setup, or returns the cached result for the same inputs. */
export async function runSetup(request: SetupRequest): Promise<Result<SetupError, SetupResult>> {
  const argv = request.argv ?? defaultSetupArgv(request.ecosystem, request.allowInstallScripts);
  if (argv === null || argv.length === 0) {
    return err(
      setupError(
        `no setup is known for ${request.ecosystem.kind}; name one with --setup or in .crustcore/environment.json`,
      ),
    );
  }
  const files = await nodeSetupFiles(request.tree, request.ecosystem);
  const key = setupKey({ argv, allowInstallScripts: request.allowInstallScripts, runtime: process.version, files });
  const cached = readSetupRecord(request.home, key);
  if (cached !== null) {
    return ok({ key, treeDir: join(setupCacheDir(request.home, key), 'tree'), hit: true, record: cached, refused: [] });
  }
  // Two runs of one task (baseline and verify) needing the same setup share one install.
  const running = inFlight.get(key);
  if (running !== undefined) return running;
  const started = withProgress(`installing dependencies (${argv.join(' ')})`, request.progress, () =>
    installFresh(request, argv, key, files),
  ).finally(() => inFlight.delete(key));
  inFlight.set(key, started);
  return started;
}

const inFlight = new Map<string, Promise<Result<SetupError, SetupResult>>>();

async function installFresh(
  request: SetupRequest,
  argv: readonly string[],
  key: string,
  files: ReadonlyMap<string, string>,
): Promise<Result<SetupError, SetupResult>> {
  mkdirSync(environmentsDir(request.home), { recursive: true, mode: 0o700 });
  const stage = mkdtempSync(join(environmentsDir(request.home), '.stage-'));
  const treeDir = join(stage, 'tree');
  try {
    for (const [name, text] of files) {
      mkdirSync(dirname(join(treeDir, name)), { recursive: true });
      writeFileSync(join(treeDir, name), text);
    }
    const started = Date.now();
    const ran = await runSetupSandbox({
      treeDir,
      argv,
      registryUrl: request.registryUrl,
      cacheDir: request.npmCacheDir ?? join(request.home, 'npm-cache'),
      allowInstallScripts: request.allowInstallScripts,
      ...(request.timeoutMs === undefined ? {} : { timeoutMs: request.timeoutMs }),
      ...(request.signal === undefined ? {} : { signal: request.signal }),
    });
    if (ran.exitCode !== 0) {
      return err(setupError(`setup "${argv.join(' ')}" ${ran.failure ?? `exited with ${ran.exitCode}`}`, ran.output));
    }
    const record: SetupRecord = {
      key,
      argv,
      allowInstallScripts: request.allowInstallScripts,
      durationMs: Date.now() - started,
    };
    writeFileSync(join(stage, SETUP_RECORD), JSON.stringify(record));
    return ok(publish(request.home, stage, key, record, ran.refused));
  } finally {
    rmSync(stage, { recursive: true, force: true, maxRetries: 3 });
  }
}

/** Renames the finished stage into the cache; a concurrent identical setup that won the race is used instead. */
function publish(
  home: string,
  stage: string,
  key: string,
  record: SetupRecord,
  refused: readonly string[],
): SetupResult {
  const final = setupCacheDir(home, key);
  try {
    renameSync(stage, final);
  } catch {
    // Another run published the same key first; its tree is equivalent.
  }
  return { key, treeDir: join(final, 'tree'), hit: false, record: readSetupRecord(home, key) ?? record, refused };
}

export interface SetupSandboxRun {
  /** Directory the command runs in (bound read-write as its worktree). */
  readonly treeDir: string;
  readonly argv: readonly string[];
  /** The one origin the proxy lets through. */
  readonly registryUrl: string;
  /** npm cache, bound read-write. */
  readonly cacheDir: string;
  readonly allowInstallScripts: boolean;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

export interface SetupSandboxResult {
  readonly exitCode: number | null;
  /** Why it did not run or finish (refusal, start error, timeout), else null. */
  readonly failure: string | null;
  readonly output: string;
  readonly stdout: string;
  /** Targets the proxy refused. */
  readonly refused: readonly string[];
}

/**
 * One command in the setup profile with the registry proxy running: the
 * mechanism under every setup (exported so attack tests can aim other
 * commands at it).
 */
export async function runSetupSandbox(run: SetupSandboxRun): Promise<SetupSandboxResult> {
  const failed = (failure: string): SetupSandboxResult => ({
    exitCode: null,
    failure,
    output: '',
    stdout: '',
    refused: [],
  });
  const origin = originOf(run.registryUrl);
  if (origin === null) return failed(`the npm registry "${run.registryUrl}" is not an http(s) URL`);
  const node = scriptNodeBinary();
  if (node === null) return failed('there is no node on PATH to run it with: install Node, or pass --no-environment');
  // Unix socket paths are short (108 bytes): the proxy's directory lives under the system temp dir.
  const socketDir = mkdtempSync(join(tmpdir(), 'crustcore-setup-'));
  try {
    mkdirSync(run.cacheDir, { recursive: true, mode: 0o700 });
    const proxy = await startRegistryProxy(join(socketDir, 'registry.sock'), [origin]);
    if (proxy._tag === 'Left') return failed(proxy.left);
    try {
      const cap = mintSandboxExecCap('setup', {
        extraBinds: [
          { source: socketDir, target: SANDBOX_PROXY_DIR, mode: 'read-only' },
          { source: bridgeScriptPath(socketDir), target: SANDBOX_BRIDGE, mode: 'read-only' },
          { source: run.cacheDir, target: SANDBOX_NPM_CACHE, mode: 'read-write' },
        ],
      });
      if (cap._tag === 'Left') return failed(`setup sandbox: ${cap.left.message}`);
      const result = await runSandboxed(cap.right, {
        argv: [node, SANDBOX_BRIDGE, String(SETUP_PROXY_PORT), `${SANDBOX_PROXY_DIR}/registry.sock`, '--', ...run.argv],
        worktreeRoot: run.treeDir,
        cwd: run.treeDir,
        env: {
          npm_config_registry: run.registryUrl,
          npm_config_cache: SANDBOX_NPM_CACHE,
          // Belt and braces: even a user-named setup argv gets no install scripts without approval.
          npm_config_ignore_scripts: run.allowInstallScripts ? 'false' : 'true',
          // Metadata the cache already holds is not fetched again (the profile turns off the audit,
          // the funding notice and npm's update check).
          npm_config_prefer_offline: 'true',
        },
        ...(run.timeoutMs === undefined ? {} : { timeoutMs: run.timeoutMs }),
        ...(run.signal === undefined ? {} : { signal: run.signal }),
      });
      if (result._tag === 'Left') return failed(`setup refused: ${result.left.message}`);
      const r = result.right;
      const failure =
        r.startError?.message ?? (r.timedOut ? 'timed out' : r.exitCode === null ? `killed by ${r.signal}` : null);
      return {
        exitCode: r.exitCode,
        failure,
        output: `${r.stdout.text.slice(-4000)}\n${r.stderr.text.slice(-4000)}`,
        stdout: r.stdout.text,
        refused: [...proxy.right.refused],
      };
    } finally {
      await proxy.right.close();
    }
  } finally {
    rmSync(socketDir, { recursive: true, force: true });
  }
}
