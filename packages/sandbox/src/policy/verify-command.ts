/**
 * Which commands may verify a patch without asking. Recognition is by argv
 * structure — program, subcommand, and a closed set of options — never by a
 * string prefix, so `['sh', '-c', 'npm test && curl x']` is not a test run.
 * Anything unrecognized needs a profile that permits arbitrary commands or an
 * approval bound to the exact argv (by its hash).
 */
import { basename } from 'node:path';
import { type Hash32, hashJson } from '@crustcore/kernel';
import { SANDBOX_PROFILES, type SandboxProfileName } from '../profile/sandbox-profile.js';
import { shellUse } from './shell-detection.js';

/** Test runners recognized by `classifyVerifyCommand`. */
export type TestRunnerKind =
  | 'npm'
  | 'pnpm'
  | 'yarn'
  | 'node-test'
  | 'vitest'
  | 'jest'
  | 'pytest'
  | 'cargo-test'
  | 'go-test'
  | 'make-test';

/** The classification of a verify argv. */
export type VerifyCommandClass =
  | { readonly _tag: 'TestRunner'; readonly runner: TestRunnerKind; readonly argv: readonly string[] }
  | { readonly _tag: 'Unrecognized'; readonly argv: readonly string[]; readonly reason: string };

/** Where a program may live for its name to be trusted: a bare name (looked up on the sandbox PATH) or a system dir. */
const TRUSTED_PROGRAM_DIRECTORIES = ['/usr/bin', '/bin', '/usr/local/bin'];

function trustedProgram(arg: string): string | null {
  if (!arg.includes('/')) return arg;
  const name = basename(arg);
  return TRUSTED_PROGRAM_DIRECTORIES.some((directory) => arg === `${directory}/${name}`) ? name : null;
}

/** Arguments after `--` go to the test runner itself; any string is fine there. */
function splitAtDoubleDash(args: readonly string[]): { before: readonly string[]; hasDash: boolean } {
  const at = args.indexOf('--');
  return at === -1 ? { before: args, hasDash: false } : { before: args.slice(0, at), hasDash: true };
}

const PACKAGE_MANAGER_SAFE_OPTIONS = new Set([
  '--silent',
  '-s',
  '--if-present',
  '--workspaces',
  '-ws',
  '--quiet',
  '-q',
]);

function isPackageManagerTest(args: readonly string[]): boolean {
  const { before } = splitAtDoubleDash(args);
  const positional = before.filter((arg) => !arg.startsWith('-'));
  const options = before.filter((arg) => arg.startsWith('-'));
  const okOptions = options.every(
    (option) => PACKAGE_MANAGER_SAFE_OPTIONS.has(option) || /^--workspace=[\w@./-]+$/.test(option),
  );
  if (!okOptions) return false;
  if (positional.length === 1) return positional[0] === 'test' || positional[0] === 't';
  if (positional.length === 2)
    return (positional[0] === 'run' || positional[0] === 'run-script') && positional[1] === 'test';
  return false;
}

const NODE_CODE_FLAGS =
  /^(-e|--eval|-p|--print|-r|--require|--import|--loader|--experimental-loader|-i|--interactive|--inspect.*)(=|$)/;

function isNodeTest(args: readonly string[]): boolean {
  if (!args.includes('--test')) return false;
  return args.every((arg) => !NODE_CODE_FLAGS.test(arg) && !/^-[a-z]{2,}$/.test(arg));
}

/** Options after `npx` that do not fetch or run anything else. */
const NPX_SAFE_OPTIONS = new Set(['--no-install', '--offline', '--no']);

const VITEST_NON_RUN_SUBCOMMANDS = new Set(['watch', 'dev', 'init', 'bench', 'ui', 'list']);
const WATCH_FLAGS = new Set(['--watch', '--watchAll', '-w', '--ui']);

function classifyJsRunner(name: string, args: readonly string[]): TestRunnerKind | null {
  if (args.some((arg) => WATCH_FLAGS.has(arg) || arg.startsWith('--watch='))) return null;
  if (name === 'vitest') {
    const subcommand = args[0];
    return subcommand !== undefined && VITEST_NON_RUN_SUBCOMMANDS.has(subcommand) ? null : 'vitest';
  }
  return name === 'jest' ? 'jest' : null;
}

function classify(argv: readonly string[]): TestRunnerKind | string {
  const first = argv[0];
  if (first === undefined) return 'argv is empty';
  const program = trustedProgram(first);
  if (program === null) return `${first} is not a bare program name or a system binary`;
  const args = argv.slice(1);
  switch (program) {
    case 'npm':
    case 'pnpm':
    case 'yarn':
      return isPackageManagerTest(args) ? program : `${program} ${args.join(' ').slice(0, 40)} is not a test run`;
    case 'node':
      return isNodeTest(args) ? 'node-test' : 'node without --test, or with code-loading flags';
    case 'npx': {
      let index = 0;
      while (index < args.length && NPX_SAFE_OPTIONS.has(args[index] as string)) index++;
      const tool = args[index];
      const kind = tool === undefined ? null : classifyJsRunner(tool, args.slice(index + 1));
      return kind ?? 'npx runs something other than vitest or jest';
    }
    case 'vitest':
    case 'jest':
      return classifyJsRunner(program, args) ?? `${program} in watch mode`;
    case 'pytest':
    case 'py.test':
      return 'pytest';
    case 'python':
    case 'python3':
      return args[0] === '-m' && args[1] === 'pytest' ? 'pytest' : 'python without -m pytest';
    case 'cargo':
      return args[0] === 'test' ? 'cargo-test' : 'cargo without test';
    case 'go':
      return args[0] === 'test' &&
        !args.some(
          (arg) => arg === '-exec' || arg.startsWith('-exec=') || arg === '-toolexec' || arg.startsWith('-toolexec='),
        )
        ? 'go-test'
        : 'go without test, or with -exec';
    case 'make': {
      const targets = args.filter((arg) => !/^(-j\d*|-k|-s|--silent|--keep-going)$/.test(arg));
      return targets.length === 1 && targets[0] === 'test' ? 'make-test' : 'make without exactly the test target';
    }
    default:
      return `${program} is not a recognized test runner`;
  }
}

const RUNNERS: ReadonlySet<string> = new Set<TestRunnerKind>([
  'npm',
  'pnpm',
  'yarn',
  'node-test',
  'vitest',
  'jest',
  'pytest',
  'cargo-test',
  'go-test',
  'make-test',
]);

/**
 * Recognizes test runners by argv structure: `npm|pnpm|yarn test`,
 * `npm run test`, `node --test`, `npx vitest|jest`, `vitest`, `jest`,
 * `pytest`, `python -m pytest`, `cargo test`, `go test`, `make test`.
 */
export function classifyVerifyCommand(argv: readonly string[]): VerifyCommandClass {
  const outcome = classify(argv);
  if (RUNNERS.has(outcome)) return { _tag: 'TestRunner', runner: outcome as TestRunnerKind, argv };
  return { _tag: 'Unrecognized', argv, reason: outcome };
}

/** Whether a sandboxed command may run. */
export type SandboxCommandDecision =
  | {
      readonly _tag: 'Allowed';
      readonly basis: 'RecognizedTestRunner' | 'ProfilePermitsAnyCommand' | 'ApprovedExactArgv';
    }
  | { readonly _tag: 'NeedsApproval'; readonly argvHash: Hash32; readonly reason: string }
  | { readonly _tag: 'Denied'; readonly reason: string };

/** Hash an approval of one exact argv is bound to (canonical JSON of the array). */
export const argvHash = (argv: readonly string[]): Hash32 => hashJson([...argv]);

/**
 * Decides whether `argv` may run under `profile`. A shell in a profile
 * without `allowShell` is denied outright — no approval widens a deny. The
 * `verify` profile runs recognized test runners, or an argv whose
 * `argvHash` is in `approvedArgvHashes`; profiles with `permitsAnyCommand`
 * (build, worker, hostile) permit any argv — that is what they are for.
 */
export function decideSandboxCommand(
  profile: SandboxProfileName,
  argv: readonly string[],
  approvedArgvHashes: ReadonlySet<string> = new Set(),
): SandboxCommandDecision {
  const settings = SANDBOX_PROFILES[profile];
  if (argv.length === 0) return { _tag: 'Denied', reason: 'argv is empty' };
  const shell = shellUse(argv);
  if (shell !== null && !settings.allowShell)
    return { _tag: 'Denied', reason: `profile ${profile} allows no shell: ${shell}` };
  if (settings.permitsAnyCommand) return { _tag: 'Allowed', basis: 'ProfilePermitsAnyCommand' };
  const classified = classifyVerifyCommand(argv);
  if (classified._tag === 'TestRunner') return { _tag: 'Allowed', basis: 'RecognizedTestRunner' };
  const hash = argvHash(argv);
  if (approvedArgvHashes.has(hash)) return { _tag: 'Allowed', basis: 'ApprovedExactArgv' };
  return { _tag: 'NeedsApproval', argvHash: hash, reason: classified.reason };
}
