/**
 * Whether a failure of the verify command on the UNMODIFIED base means no
 * patch can ever pass: a command or dependency missing in the sandbox, or
 * a test that needs the network. Then retrying the worker only burns time
 * (a run once spent 285 s retrying the same patch three times), so the task
 * stops at once and says what is missing and how to fix it.
 *
 * Deliberately narrow: a base that fails because a repository file or a
 * local module is missing may be exactly what the task is to add.
 */
import { basename } from 'node:path';
import type { Argv } from './argv.js';
import type { Diagnosis } from './diagnosis.js';
import { isPackageSpecifier } from './missing-thing.js';

export interface EnvironmentBlocker {
  /** What is missing, in a few words ("command `jest`", "dependency `lodash`", "network access"). */
  readonly missing: string;
  /** One line for people: what failed on the base and how to fix it. */
  readonly message: string;
}

const quote = (argv: Argv): string => argv.join(' ');

/** Python modules that are the runner itself (`python -m pytest` without pytest installed). */
function pythonRunnerModule(argv: Argv): string | null {
  const dashM = argv.indexOf('-m');
  if (dashM !== -1 && argv[dashM + 1] !== undefined) return (argv[dashM + 1] as string).split('.')[0] ?? null;
  return basename(argv[0] ?? '');
}

function commandBlocker(d: Diagnosis, argv: Argv): EnvironmentBlocker | null {
  const name = d.missing ?? null;
  // "./run-tests.sh" missing on the base may be what the task is to write.
  if (name !== null && (name.startsWith('./') || name.startsWith('../'))) return null;
  if (name === null && (argv[0] ?? '').includes('/') && !(argv[0] ?? '').startsWith('/')) return null;
  const what = name === null ? 'a command' : `command \`${name}\``;
  return {
    missing: what,
    message: `the verify command \`${quote(argv)}\` fails on the unmodified base: ${what} was not found in the sandbox. Install it on the host where the sandbox sees it (/usr, /bin, the Node install), or pass a --verify command that exists; no worker can fix this, so nothing was retried`,
  };
}

function moduleBlocker(d: Diagnosis, argv: Argv): EnvironmentBlocker | null {
  const name = d.missing ?? null;
  if (name === null || !isPackageSpecifier(name)) return null;
  const python = /No module named/.test(d.excerpt) || /^python/.test(basename(argv[0] ?? ''));
  // A Python module may be the project's own file the task is to write; only the runner counts.
  if (python && name.split('.')[0] !== pythonRunnerModule(argv)) return null;
  return {
    missing: `dependency \`${name}\``,
    message: `the verify command \`${quote(argv)}\` fails on the unmodified base: the dependency \`${name}\` is not installed where the sandbox can see it. The task worktree is a clean checkout of the base commit (untracked node_modules or virtualenvs are not in it): install the project's dependencies so the verify command finds them, or pass a --verify command that does not need them; nothing was retried`,
  };
}

/** An environment reason no patch can fix, or null (then the task goes on as usual). */
export function baselineBlocker(d: Diagnosis, argv: Argv): EnvironmentBlocker | null {
  if (d.kind === 'environment' && d.environmentCause === 'command-not-found') return commandBlocker(d, argv);
  if (d.kind === 'environment' && d.environmentCause === 'network') {
    return {
      missing: 'network access',
      message: `the verify command \`${quote(argv)}\` fails on the unmodified base because it needs the network, and the sandbox has none (${d.summary}). Make the tests run offline, or pass a --verify command that does; nothing was retried`,
    };
  }
  if (d.kind === 'missing-module') return moduleBlocker(d, argv);
  return null;
}
