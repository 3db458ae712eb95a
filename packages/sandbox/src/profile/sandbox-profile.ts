/**
 * Named sandbox profiles. A profile is the whole policy of a run: which
 * backends may carry it, network, shell, extra binds, environment names and
 * resource limits. Callers pick a profile by name; they can only tighten it.
 * docs/sandbox.md documents every value here — keep the two in step.
 */

/** The five profiles. */
export type SandboxProfileName = 'verify' | 'build' | 'worker' | 'hostile' | 'setup';

/** `bubblewrap`: namespaces. `process-jail`: weaker, only when chosen explicitly. */
export type SandboxBackendKind = 'bubblewrap' | 'process-jail';

/** Kernel resource limits applied with prlimit (and a pids cgroup for `processes` as root). */
export interface ResourceLimits {
  /**
   * Memory, bounded twice: RLIMIT_DATA for each process (private writable
   * memory: heap, anonymous mappings) and, as root, a cgroup v1 memory group
   * capping the whole run at the same number. Not RLIMIT_AS: V8 reserves
   * large address ranges it never touches (WebAssembly guard regions), so an
   * address-space cap breaks vitest long before memory is short, while
   * reservations that are never made writable do not count against
   * RLIMIT_DATA.
   */
  readonly memoryBytes: number;
  /** RLIMIT_CPU in seconds (soft; the hard limit is 5 s later). */
  readonly cpuSeconds: number;
  /** Processes and threads: pids cgroup `pids.max` as root, RLIMIT_NPROC otherwise. */
  readonly processes: number;
  /** RLIMIT_FSIZE: the largest file the run may write. */
  readonly fileSizeBytes: number;
  /** RLIMIT_NOFILE. */
  readonly openFiles: number;
}

/** Which extra environment variable names a caller may pass. */
export interface EnvironmentPolicy {
  /** Exact names allowed. */
  readonly names: readonly string[];
  /** Name prefixes allowed (`VITEST_`). */
  readonly prefixes: readonly string[];
  /**
   * Names that look like credentials but carry a placeholder for a proxy
   * (`ANTHROPIC_API_KEY` for a worker talking to the model proxy). The value
   * must still not look like a real secret.
   */
  readonly placeholderSecretNames: readonly string[];
  /**
   * Names (also in `names`) that the dangerous-name rule would drop but that
   * this profile's own runner sets to values it chose: the setup profile's
   * npm registry, cache and install-script switch. Only the dangerous-name
   * rule is waived; secret-looking values are still dropped.
   */
  readonly setByRunner?: readonly string[];
}

/** The npm settings the setup runner passes into the setup sandbox (see `setByRunner`). */
const SETUP_NPM_SETTINGS: readonly string[] = [
  'npm_config_registry',
  'npm_config_cache',
  'npm_config_ignore_scripts',
  'npm_config_prefer_offline',
];

/** A complete, named run policy. */
export interface SandboxProfile {
  readonly name: SandboxProfileName;
  readonly summary: string;
  /** `none`: own network namespace with only loopback. `host`: shares the host network. */
  readonly network: 'none' | 'host';
  /** Whether argv may start a shell (`sh -c …`, `bash script`). */
  readonly allowShell: boolean;
  /**
   * Whether any argv may run. When false (verify), only recognized test
   * runners run without an approval of the exact argv.
   */
  readonly permitsAnyCommand: boolean;
  /** Whether the capability may carry caller-chosen extra binds (sockets, a throwaway HOME). */
  readonly allowExtraBinds: boolean;
  /** Whether PATH-like variables may name directories inside the worktree. */
  readonly allowWorktreeInPathLists: boolean;
  /** Backends allowed to carry this profile; the first is the default. */
  readonly backends: readonly [SandboxBackendKind, ...SandboxBackendKind[]];
  readonly limits: ResourceLimits;
  readonly defaultTimeoutMs: number;
  readonly maxTimeoutMs: number;
  /** Per-stream output budget. */
  readonly maxOutputBytes: number;
  /** Fixed variables every run gets (besides PATH, HOME, TMPDIR). */
  readonly baseEnv: Readonly<Record<string, string>>;
  readonly envPolicy: EnvironmentPolicy;
}

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;
const minute = 60_000;

const testRunnerNames = [
  'CI',
  'NODE_ENV',
  'NO_COLOR',
  'FORCE_COLOR',
  'TZ',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'PATH',
  'NODE_PATH',
  'PYTHONPATH',
  'PYTHONDONTWRITEBYTECODE',
  'PYTHONHASHSEED',
  'PYTHONUNBUFFERED',
  'PYTEST_ADDOPTS',
  'RUST_BACKTRACE',
  'CARGO_TERM_COLOR',
  'CARGO_NET_OFFLINE',
  'GOFLAGS',
  'GOPATH',
  'GOCACHE',
  'GOMODCACHE',
  'GOPROXY',
  'GO111MODULE',
  'GOTOOLCHAIN',
  'CGO_ENABLED',
  'DEBUG',
] as const;
const testRunnerPrefixes = ['VITEST_', 'JEST_', 'MOCHA_'] as const;

/**
 * Port of the in-sandbox bridge to the host's registry proxy (setup runs
 * only). Fixed: each sandbox has its own loopback, so it cannot collide.
 */
export const SETUP_PROXY_PORT = 8790;
const setupProxy = `http://127.0.0.1:${SETUP_PROXY_PORT}`;

/** The built-in profiles. Frozen; callers tighten limits per capability. */
export const SANDBOX_PROFILES: Readonly<Record<SandboxProfileName, SandboxProfile>> = Object.freeze({
  verify: {
    name: 'verify',
    permitsAnyCommand: false,
    summary: 'Run a recognized test command on a task worktree: no network, no shell, moderate limits.',
    network: 'none',
    allowShell: false,
    allowExtraBinds: false,
    allowWorktreeInPathLists: false,
    backends: ['bubblewrap', 'process-jail'],
    limits: { memoryBytes: 8 * GiB, cpuSeconds: 600, processes: 256, fileSizeBytes: 1 * GiB, openFiles: 4096 },
    defaultTimeoutMs: 10 * minute,
    maxTimeoutMs: 60 * minute,
    maxOutputBytes: 4 * MiB,
    baseEnv: { CI: '1', NO_COLOR: '1', LANG: 'C.UTF-8' },
    envPolicy: { names: testRunnerNames, prefixes: testRunnerPrefixes, placeholderSecretNames: [] },
  },
  build: {
    name: 'build',
    permitsAnyCommand: true,
    summary: 'Builds and scripts on a task worktree: no network, shell allowed, larger limits.',
    network: 'none',
    allowShell: true,
    allowExtraBinds: false,
    allowWorktreeInPathLists: true,
    backends: ['bubblewrap', 'process-jail'],
    limits: { memoryBytes: 16 * GiB, cpuSeconds: 1800, processes: 512, fileSizeBytes: 4 * GiB, openFiles: 8192 },
    defaultTimeoutMs: 20 * minute,
    maxTimeoutMs: 120 * minute,
    maxOutputBytes: 8 * MiB,
    baseEnv: { CI: '1', NO_COLOR: '1', LANG: 'C.UTF-8' },
    envPolicy: {
      names: [...testRunnerNames, 'MAKEFLAGS', 'CC', 'CXX', 'CFLAGS', 'CXXFLAGS', 'LDFLAGS', 'CPPFLAGS'],
      prefixes: testRunnerPrefixes,
      placeholderSecretNames: [],
    },
  },
  worker: {
    name: 'worker',
    permitsAnyCommand: true,
    summary:
      'External agent CLIs (Codex, Claude Code): no network except caller-bound sockets (model proxy), shell allowed, long runs.',
    network: 'none',
    allowShell: true,
    allowExtraBinds: true,
    allowWorktreeInPathLists: true,
    backends: ['bubblewrap', 'process-jail'],
    limits: { memoryBytes: 16 * GiB, cpuSeconds: 3600, processes: 512, fileSizeBytes: 2 * GiB, openFiles: 8192 },
    defaultTimeoutMs: 30 * minute,
    maxTimeoutMs: 240 * minute,
    maxOutputBytes: 16 * MiB,
    baseEnv: { LANG: 'C.UTF-8' },
    envPolicy: {
      names: [
        ...testRunnerNames,
        'ANTHROPIC_BASE_URL',
        'OPENAI_BASE_URL',
        'CODEX_HOME',
        'CLAUDE_CONFIG_DIR',
        'DISABLE_AUTOUPDATER',
        'DISABLE_TELEMETRY',
        'ANTHROPIC_API_KEY',
        'OPENAI_API_KEY',
        'CRUSTCORE_MODEL_PROXY_KEY',
      ],
      prefixes: [...testRunnerPrefixes, 'CLAUDE_CODE_', 'CRUSTCORE_WORKER_'],
      placeholderSecretNames: ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'CRUSTCORE_MODEL_PROXY_KEY'],
    },
  },
  hostile: {
    name: 'hostile',
    permitsAnyCommand: true,
    summary: 'Untrusted code and install scripts: bubblewrap only, no network, small limits, short runs.',
    network: 'none',
    allowShell: true,
    allowExtraBinds: false,
    allowWorktreeInPathLists: false,
    backends: ['bubblewrap'],
    limits: { memoryBytes: 2 * GiB, cpuSeconds: 60, processes: 64, fileSizeBytes: 64 * MiB, openFiles: 256 },
    defaultTimeoutMs: 1 * minute,
    maxTimeoutMs: 10 * minute,
    maxOutputBytes: 1 * MiB,
    baseEnv: { CI: '1', NO_COLOR: '1', LANG: 'C.UTF-8' },
    envPolicy: { names: ['CI', 'NO_COLOR', 'LANG', 'TZ', 'PATH'], prefixes: [], placeholderSecretNames: [] },
  },
  setup: {
    name: 'setup',
    permitsAnyCommand: true,
    summary:
      'Dependency installs (npm ci): no network but the package registry, through the host allowlisting proxy; install scripts off unless approved.',
    network: 'none',
    allowShell: false,
    allowExtraBinds: true,
    allowWorktreeInPathLists: false,
    backends: ['bubblewrap'],
    limits: { memoryBytes: 8 * GiB, cpuSeconds: 1800, processes: 256, fileSizeBytes: 2 * GiB, openFiles: 8192 },
    defaultTimeoutMs: 15 * minute,
    maxTimeoutMs: 60 * minute,
    maxOutputBytes: 4 * MiB,
    // The proxy variables are fixed here because callers may never set proxies (they are "dangerous" names).
    baseEnv: {
      CI: '1',
      NO_COLOR: '1',
      LANG: 'C.UTF-8',
      npm_config_proxy: setupProxy,
      npm_config_https_proxy: setupProxy,
      HTTPS_PROXY: setupProxy,
      HTTP_PROXY: setupProxy,
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
    },
    envPolicy: {
      names: ['CI', 'NO_COLOR', 'LANG', 'TZ', 'PATH', ...SETUP_NPM_SETTINGS],
      prefixes: [],
      placeholderSecretNames: [],
      // npm_config_* is dangerous in general (a registry or cache elsewhere, scripts on); here
      // runSetupSandbox sets exactly these, to the proxied registry, the bound cache and scripts off.
      setByRunner: SETUP_NPM_SETTINGS,
    },
  },
});

/** Profile names, in documentation order. */
export const SANDBOX_PROFILE_NAMES: readonly SandboxProfileName[] = ['verify', 'build', 'worker', 'hostile', 'setup'];

/** Type guard for the profile names. */
export const isSandboxProfileName = (input: unknown): input is SandboxProfileName =>
  typeof input === 'string' && (SANDBOX_PROFILE_NAMES as readonly string[]).includes(input);

/** Limits can only go down: each field of `tighter` replaces the profile's only when smaller. */
export function tightenLimits(base: ResourceLimits, tighter: Partial<ResourceLimits>): ResourceLimits {
  const pick = (key: keyof ResourceLimits): number => {
    const wanted = tighter[key];
    return wanted !== undefined && wanted < base[key] ? wanted : base[key];
  };
  return {
    memoryBytes: pick('memoryBytes'),
    cpuSeconds: pick('cpuSeconds'),
    processes: pick('processes'),
    fileSizeBytes: pick('fileSizeBytes'),
    openFiles: pick('openFiles'),
  };
}
