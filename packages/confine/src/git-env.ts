/**
 * How to run git without letting the repository (or the host user's
 * configuration) run code or redirect reads.
 *
 * The environment is built from scratch: no system config, global config is
 * /dev/null, HOME is /dev/null (XDG_CONFIG_HOME below it: nothing can exist there), no
 * terminal prompts, no optional index writes, no replace refs, and
 * `GIT_CEILING_DIRECTORIES` stops discovery from climbing out of the root.
 *
 * `gitBaseArgs()` overrides, on the command line (which beats every config
 * file), each setting of a repository's own `.git/config` that makes status,
 * diff or log run a program (hooks, fsmonitor, pager, external diff, gpg,
 * submodule summaries) or read files outside the repository (attributes,
 * excludes and mailmap files). Filter drivers are named by the repository
 * itself, so they are found and overridden per repository
 * (`git-run.ts`). Diff and log additionally need `GIT_DIFF_SAFETY_ARGS`:
 * textconv and external-diff drivers are switched off by flag, because an
 * empty override makes git try to run an empty command.
 */
import { dirname, join } from 'node:path';

/** Program search path for git and what git itself may start (nothing, after the overrides). */
const GIT_PATH = '/usr/local/bin:/usr/bin:/bin';

/**
 * git's HOME (and XDG_CONFIG_HOME below it): `/dev/null`, under which nothing
 * can ever exist. git treats `$HOME/.gitconfig`, `$XDG_CONFIG_HOME/git/config`
 * and the per-user ignore and attribute files as missing (ENOTDIR is "no such
 * file" to it), and a character device cannot get children, so nothing can
 * appear there later either. A private temp directory did the same but had
 * to be made, watched and removed, and a killed process left it behind.
 */
const EMPTY_GIT_HOME = '/dev/null';

/** The HOME every git run gets unless the caller names one. */
export function emptyGitHome(): string {
  return EMPTY_GIT_HOME;
}

export interface GitEnvOptions {
  /** HOME for git; default a private empty directory. */
  readonly home?: string;
  /**
   * The worktree root git runs in: discovery stops at its parent, so a root
   * without its own `.git` never picks up an enclosing repository.
   */
  readonly root?: string;
}

/** An environment for git, built from scratch (never from `process.env`). */
export function gitEnv(options: GitEnvOptions = {}): Readonly<Record<string, string>> {
  const home = options.home ?? emptyGitHome();
  const env: Record<string, string> = {
    PATH: GIT_PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    LC_ALL: 'C',
    LANG: 'C',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '/bin/false',
    SSH_ASKPASS: '/bin/false',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_EDITOR: '/bin/false',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_PROTOCOL_FROM_USER: '0',
  };
  if (options.root !== undefined) env.GIT_CEILING_DIRECTORIES = dirname(options.root);
  return Object.freeze(env);
}

const CONFIG_OVERRIDES: readonly string[] = [
  // Programs a repository could make status/diff/log run.
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.useBuiltinFSMonitor=false',
  'core.pager=cat',
  'core.editor=/bin/false',
  'sequence.editor=/bin/false',
  'diff.external=',
  'gpg.program=/bin/false',
  'gpg.ssh.program=/bin/false',
  'gpg.x509.program=/bin/false',
  'log.showSignature=false',
  'status.submoduleSummary=false',
  'diff.submodule=short',
  'credential.helper=',
  'core.sshCommand=/bin/false',
  'core.askPass=/bin/false',
  'protocol.allow=never',
  'gc.auto=0',
  'maintenance.auto=false',
  // Files outside the repository a config could point git at.
  'core.attributesFile=/dev/null',
  'core.excludesFile=/dev/null',
  'log.mailmap=false',
  'mailmap.file=/dev/null',
  'mailmap.blob=',
  // Index side effects and output shape the caller depends on.
  'core.untrackedCache=false',
  'core.splitIndex=false',
  'safe.bareRepository=explicit',
  'color.ui=false',
  'diff.noprefix=false',
  'diff.mnemonicPrefix=false',
  'diff.relative=false',
  'diff.suppressBlankEmpty=false',
];

/** Global git arguments (before the subcommand) that neutralize hooks and repository config. */
export function gitBaseArgs(): readonly string[] {
  const args: string[] = [];
  for (const override of CONFIG_OVERRIDES) args.push('-c', override);
  args.push('--no-pager', '--no-replace-objects', '--literal-pathspecs');
  return args;
}

/** Flags every `git diff`/`git log` run needs: no textconv, no external diff, no color. */
export const GIT_DIFF_SAFETY_ARGS: readonly string[] = Object.freeze(['--no-ext-diff', '--no-textconv', '--no-color']);
