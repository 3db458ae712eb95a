/**
 * Builds the exact environment of a sandboxed run. Nothing comes from the
 * host: the profile's base variables, the sandbox's own HOME/TMPDIR/PATH, and
 * the caller's extra variables that survive every check below. Each dropped
 * variable is reported by name and reason — never by value.
 */
import { existsSync } from 'node:fs';
import { isInside, isNormalizedAbsolute } from '../mount/path-shape.js';
import type { EnvironmentPolicy } from '../profile/sandbox-profile.js';
import { looksLikeSecretName, looksLikeSecretValue } from './secret-shape.js';

/** Why a requested variable was left out. */
export type EnvDropReason =
  /** Not a portable variable name. */
  | 'BadName'
  /** Set by the sandbox itself (HOME, TMPDIR, …). */
  | 'Reserved'
  /** Changes how programs load code or reach credentials (LD_PRELOAD, GIT_*, AWS_*, …). */
  | 'Dangerous'
  /** The name says it holds a credential. */
  | 'SecretName'
  /** The value looks like a credential. */
  | 'SecretValue'
  /** The profile does not allow this name. */
  | 'NotAllowlisted'
  /** A path-list component is empty, relative, missing, not visible, or inside the worktree. */
  | 'BadPathList'
  /** Name or value is too long. */
  | 'TooLarge';

/** One variable that did not reach the sandbox. `detail` never contains the value. */
export interface DroppedEnvVar {
  readonly name: string;
  readonly reason: EnvDropReason;
  readonly detail: string;
}

/** The environment a run gets, and what was left out. */
export interface SanitizedEnv {
  readonly env: Readonly<Record<string, string>>;
  readonly dropped: readonly DroppedEnvVar[];
}

/** What the sanitizer needs to know about the run's filesystem view. */
export interface EnvContext {
  readonly policy: EnvironmentPolicy;
  readonly baseEnv: Readonly<Record<string, string>>;
  /** Sandbox HOME and TMPDIR (paths as the sandbox sees them). */
  readonly home: string;
  readonly tmpdir: string;
  /** PATH used when the caller passes none or an invalid one. */
  readonly defaultPath: string;
  /** Real path of the worktree. */
  readonly worktreeRoot: string;
  readonly allowWorktreeInPathLists: boolean;
  /** Read-only directories inside the worktree that path lists may name even when the worktree may not be. */
  readonly trustedWorktreePaths?: readonly string[];
  /**
   * Maps a path as the sandbox sees it to the host path behind it, or null
   * when the sandbox cannot see it or it lives on a sandbox-only tmpfs.
   */
  readonly hostPathOf: (sandboxPath: string) => string | null;
  /** Roots of sandbox-only writable tmpfs mounts (HOME, /tmp). */
  readonly scratchRoots: readonly string[];
}

const MAX_NAME_CHARS = 128;
const MAX_VALUE_CHARS = 32 * 1024;
const NAME_SHAPE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const RESERVED = new Set(['HOME', 'TMPDIR', 'TMP', 'TEMP', 'PWD', 'OLDPWD', 'SHLVL', 'USER', 'LOGNAME', 'SHELL', '_']);

// Names that inject code into every program (loader, shell, interpreter hooks),
// reach host credentials or agents, or redirect git and package managers.
const DANGEROUS: readonly RegExp[] = [
  /^LD_/,
  /^DYLD_/,
  /^GIT_/,
  /^SSH_/,
  /^GPG_/,
  /^GNUPGHOME$/,
  /^AWS_/,
  /^GCP_/,
  /^GOOGLE_/,
  /^GCLOUD_/,
  /^CLOUDSDK_/,
  /^AZURE_/,
  /^ARM_(CLIENT|TENANT|SUBSCRIPTION)_/,
  /^NPM_TOKEN$/,
  /^NPM_CONFIG_/i,
  /^NODE_AUTH_TOKEN$/,
  /^YARN_/,
  /^PNPM_/,
  /^TWINE_/,
  /^PYPI_/,
  /^PIP_/,
  /^POETRY_/,
  /^UV_/,
  /^CARGO_REGISTR/,
  /^GH_/,
  /^GITHUB_/,
  /^GITLAB_/,
  /^BITBUCKET_/,
  /^DOCKER_/,
  /^KUBECONFIG$/,
  /^VAULT_/,
  /^HOMEBREW_/,
  /^KRB5/,
  /^BASH_ENV$/,
  /^ENV$/,
  /^BASH_FUNC_/,
  /^PROMPT_COMMAND$/,
  /^PS4$/,
  /^SHELLOPTS$/,
  /^BASHOPTS$/,
  /^IFS$/,
  /^PYTHONSTARTUP$/,
  /^PYTHONINSPECT$/,
  /^PYTHONHOME$/,
  /^PERL5OPT$/,
  /^PERL5DB$/,
  /^RUBYOPT$/,
  /^NODE_OPTIONS$/,
  /^NODE_REPL_EXTERNAL_MODULE$/,
  /^NODE_EXTRA_CA_CERTS$/,
  /^JAVA_TOOL_OPTIONS$/,
  /^_JAVA_OPTIONS$/,
  /^JDK_JAVA_OPTIONS$/,
  /^GCONV_PATH$/,
  /^HOSTALIASES$/,
  /^LOCALDOMAIN$/,
  /^RES_OPTIONS$/,
  /^XDG_RUNTIME_DIR$/,
  /^DBUS_/,
  /^DISPLAY$/,
  /^WAYLAND_DISPLAY$/,
  /^XAUTHORITY$/,
  /^(HTTPS?|FTP|ALL|NO)_PROXY$/i,
];

/** Variables holding lists of directories searched for code: every component must be real and visible. */
const SEARCH_PATH_LISTS = new Set([
  'PATH',
  'NODE_PATH',
  'PYTHONPATH',
  'CLASSPATH',
  'PERL5LIB',
  'PERLLIB',
  'RUBYLIB',
  'GEM_PATH',
  'MANPATH',
  'INFOPATH',
  'PKG_CONFIG_PATH',
  'CPATH',
  'LIBRARY_PATH',
  'C_INCLUDE_PATH',
  'CPLUS_INCLUDE_PATH',
  'CDPATH',
  'XDG_DATA_DIRS',
  'XDG_CONFIG_DIRS',
]);

/** Variables naming one directory a tool writes to (caches, tool homes): may not exist yet. */
const SINGLE_DIRECTORIES = new Set([
  'GOPATH',
  'GOCACHE',
  'GOMODCACHE',
  'CARGO_HOME',
  'CODEX_HOME',
  'CLAUDE_CONFIG_DIR',
]);

/** True when `name` would be dropped as dangerous regardless of profile. */
export const isDangerousEnvName = (name: string): boolean => DANGEROUS.some((pattern) => pattern.test(name));

function checkSearchPathList(name: string, value: string, context: EnvContext): string | null {
  const components = value.split(':');
  for (const [index, component] of components.entries()) {
    const where = `${name} component ${index + 1}`;
    if (component === '') return `${where} is empty (it would mean the current directory)`;
    if (!isNormalizedAbsolute(component)) return `${where} is not a normalized absolute path`;
    const trusted = (context.trustedWorktreePaths ?? []).some((path) => isInside(component, path));
    if (!context.allowWorktreeInPathLists && !trusted && isInside(component, context.worktreeRoot)) {
      return `${where} is inside the worktree`;
    }
    const hostPath = context.hostPathOf(component);
    if (hostPath === null) return `${where} is not visible in the sandbox`;
    if (!existsSync(hostPath)) return `${where} does not exist`;
  }
  return null;
}

function checkSingleDirectory(name: string, value: string, context: EnvContext): string | null {
  if (!isNormalizedAbsolute(value)) return `${name} is not a normalized absolute path`;
  if (context.scratchRoots.some((root) => isInside(value, root))) return null;
  if (context.hostPathOf(value) === null) return `${name} is not visible in the sandbox`;
  return null;
}

function allowlisted(name: string, policy: EnvironmentPolicy): boolean {
  return policy.names.includes(name) || policy.prefixes.some((prefix) => name.startsWith(prefix));
}

/** Decides one requested variable: null to keep it, else why it is dropped. */
function judge(name: string, value: string, context: EnvContext): DroppedEnvVar | null {
  const drop = (reason: EnvDropReason, detail: string): DroppedEnvVar => ({ name, reason, detail });
  if (name.length > MAX_NAME_CHARS || value.length > MAX_VALUE_CHARS) return drop('TooLarge', 'name or value too long');
  if (!NAME_SHAPE.test(name)) return drop('BadName', 'names are [A-Za-z_][A-Za-z0-9_]*');
  if (RESERVED.has(name)) return drop('Reserved', 'set by the sandbox');
  const setByRunner = context.policy.setByRunner?.includes(name) === true;
  if (!setByRunner && isDangerousEnvName(name)) return drop('Dangerous', 'loads code or reaches host credentials');
  const placeholder = context.policy.placeholderSecretNames.includes(name);
  if (!placeholder && looksLikeSecretName(name)) return drop('SecretName', 'the name marks a credential');
  if (looksLikeSecretValue(value)) return drop('SecretValue', 'the value looks like a credential');
  if (!allowlisted(name, context.policy)) return drop('NotAllowlisted', 'the profile does not allow this name');
  if (SEARCH_PATH_LISTS.has(name)) {
    const problem = checkSearchPathList(name, value, context);
    if (problem !== null) return drop('BadPathList', problem);
  }
  if (SINGLE_DIRECTORIES.has(name)) {
    const problem = checkSingleDirectory(name, value, context);
    if (problem !== null) return drop('BadPathList', problem);
  }
  return null;
}

/**
 * The environment for one run: base variables, then the caller's surviving
 * variables, then HOME/TMPDIR (which the caller cannot override). PATH falls
 * back to `defaultPath` when the caller's is missing or rejected.
 */
export function sanitizeEnvironment(requested: Readonly<Record<string, string>>, context: EnvContext): SanitizedEnv {
  const env: Record<string, string> = { PATH: context.defaultPath, ...context.baseEnv };
  const dropped: DroppedEnvVar[] = [];
  for (const [name, value] of Object.entries(requested)) {
    if (typeof value !== 'string') {
      dropped.push({ name, reason: 'BadName', detail: 'value is not a string' });
      continue;
    }
    const verdict = judge(name, value, context);
    if (verdict === null) env[name] = value;
    else dropped.push(verdict);
  }
  env.HOME = context.home;
  env.TMPDIR = context.tmpdir;
  return { env, dropped };
}
