/**
 * `crustcore run`: one verified task on the user's repository.
 *
 *   crustcore run --dir DIR --goal TEXT [--verify ARGV] [--worker ARGV | --backend NAME]
 *                 [--approve auto|ask|deny] [--commit] [--json | --output-format stream-json]
 *
 * ARGV strings are split into words the way a POSIX shell splits them
 * (quotes respected, no expansion, no operators) and never run through a shell.
 * A `--verify` typed by the user is the approval of that exact argv.
 */
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import type { RiskProfile } from '@crustcore/kernel';
import type { Narrator, RunTaskResult, TaskOutcomeKind } from '@crustcore/runtime';
import { LedgerBusyError, randomIds, runTask, SetupError, sanitizeForTerminal } from '@crustcore/runtime';
import { argvHash, decideSandboxCommand } from '@crustcore/sandbox';
import {
  type Argv,
  type CodingBackend,
  detectVerifyCommand,
  ExternalCommandBackend,
  openRepository,
  splitArgv,
} from '@crustcore/verify';
import { type Command, UsageError } from '../cli/command.js';
import { requireFullBuild } from '../cli/edition.js';
import { ExitCode } from '../cli/exit-codes.js';
import { type Io, writeLine } from '../cli/output.js';
import { crustcoreHome } from '../cli/paths.js';
import { VERSION } from '../help.js';
import { approvalChannel } from '../render/approval-channel.js';
import type { RunOutput } from '../render/headless.js';
import { humanNarrator, silentNarrator } from '../render/narrator.js';
import { loadPackBackend, PACK_BACKENDS } from './pack-backends.js';
import { runSpec } from './specs.js';

export const EXIT_FOR_OUTCOME: Readonly<Record<TaskOutcomeKind, ExitCode>> = {
  completed: ExitCode.ok,
  'verify-failed': ExitCode.verifyFailed,
  'budget-exhausted': ExitCode.budgetExhausted,
  denied: ExitCode.denied,
  drift: ExitCode.drift,
  killed: ExitCode.interrupted,
  environment: ExitCode.environment,
  internal: ExitCode.internal,
};

/**
 * Refuses, before any worktree or worker exists, a verify argv the verify
 * profile would refuse anyway (a shell, or an unrecognized command nobody
 * typed): failing after the worker has run wastes the whole attempt.
 */
function checkVerifyArgv(argv: Argv, fromUser: boolean): void {
  const verdict = decideSandboxCommand('verify', argv, fromUser ? new Set([argvHash(argv)]) : new Set());
  if (verdict._tag === 'Denied') {
    throw new UsageError(
      `--verify ${quoteWords(argv)}: the verify sandbox refuses it (${verdict.reason}). Pass the test program's own argv, e.g. --verify "npm test" or --verify "node --test"`,
    );
  }
  if (verdict._tag === 'NeedsApproval') {
    throw new UsageError(
      `the detected test command ${quoteWords(argv)} is not a recognized test runner (${verdict.reason}); pass it with --verify to approve it`,
    );
  }
}

const quoteWords = (argv: Argv): string => JSON.stringify(argv.join(' '));

const NO_TERMINAL_FOR_ASK =
  '--approve ask (the default) needs a terminal to ask you, and stdin/stderr is not one, so nothing was started. Pass --approve auto (apply when verified and no risk needs a person) or --approve deny (verify only, apply nothing), then review the kept patch with "crustcore diff <task> --export <file>"';

/**
 * The verified evidence with every risk the task found: the baseline
 * comparison can add one (tests-weakened) after the patch was minted, and
 * `--json` must not say `risks: []` while the log says otherwise.
 */
function withAllRisks(result: RunTaskResult): Record<string, unknown> | null {
  const evidence = result.verifiedEvidence;
  if (evidence === null) return null;
  const listed = Array.isArray(evidence.risks) ? (evidence.risks as { kind?: unknown }[]) : [];
  const known = new Set(listed.map((risk) => risk.kind));
  const added = result.risks
    .filter((kind) => !known.has(kind))
    .map((kind) => ({ kind, detail: 'found at verify time (compared with the run on the base)', paths: [] }));
  return { ...evidence, risks: [...listed, ...added] };
}

/** Says what a person could do when a risk stopped `--approve auto`. */
function autoRiskHint(result: RunTaskResult, approve: string): string | null {
  if (approve !== 'auto' || result.outcome.kind !== 'denied' || result.risks.length === 0) return null;
  return `risk ${result.risks.join(', ')} needs a person: run again with --approve ask in a terminal to look at the diff and decide (or crustcore diff ${result.outcome.taskId} --export <file>)`;
}

function argvOption(name: string, text: string): Argv {
  const split = splitArgv(text);
  if (split._tag === 'Left') throw new UsageError(`--${name}: ${split.left.message}`);
  return split.right;
}

/** The native agent's options from the command line (paths resolved where the user typed them). */
function packOptionsOf(values: Readonly<Record<string, unknown>>, cwd: string): Record<string, string> {
  const text = (name: string): string | undefined => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  const options: Record<string, string> = {};
  const set = (key: string, value: string | undefined): void => {
    if (value !== undefined) options[key] = value;
  };
  const path = (name: string): string | undefined => {
    const value = text(name);
    return value === undefined ? undefined : resolve(cwd, value);
  };
  set('model', text('model'));
  set('replay', path('replay'));
  set('record', path('record'));
  set('modelsConfig', path('models-config'));
  set('resume', text('resume'));
  set('thinking', text('thinking'));
  set('maxTurns', text('max-turns'));
  set('mcp', text('mcp'));
  return options;
}

/** Options only some backends take: given to another, a usage error instead of being ignored. */
function refuseOptionsOfOtherBackends(values: Readonly<Record<string, unknown>>, backendName: string): void {
  const nativeOnly = (['resume', 'thinking', 'max-turns'] as const).filter((name) => values[name] !== undefined);
  if (nativeOnly.length > 0 && backendName !== 'native')
    throw new UsageError(`${nativeOnly.map((name) => `--${name}`).join(', ')}: only the native agent takes this`);
  // The native agent meets every registered server through the gateway's meta-tools; a worker CLI only those named.
  if (values.mcp !== undefined && backendName !== 'codex' && backendName !== 'claude')
    throw new UsageError(
      '--mcp NAME,…: only --backend codex|claude takes this (the native agent finds servers itself)',
    );
}

const RUN_OPTIONS = {
  dir: { type: 'string' },
  goal: { type: 'string' },
  verify: { type: 'string' },
  worker: { type: 'string' },
  backend: { type: 'string' },
  approve: { type: 'string' },
  commit: { type: 'boolean', default: false },
  'max-revisits': { type: 'string' },
  ref: { type: 'string' },
  profile: { type: 'string' },
  timeout: { type: 'string' },
  json: { type: 'boolean', default: false },
  'output-format': { type: 'string' },
  model: { type: 'string' },
  replay: { type: 'string' },
  record: { type: 'string' },
  'models-config': { type: 'string' },
  resume: { type: 'string' },
  thinking: { type: 'string' },
  'max-turns': { type: 'string' },
  mcp: { type: 'string' },
  setup: { type: 'string' },
  'allow-install-scripts': { type: 'boolean', default: false },
  'no-environment': { type: 'boolean', default: false },
  'no-memory': { type: 'boolean' },
  'database-url': { type: 'string' },
} as const;

/**
 * The typed flags with the rest from the config files (config/run-config.ts). crustcore-nano
 * reads flags only: the build defines CRUSTCORE_NANO as `true`, and this branch, with the config
 * modules, is dropped there.
 */
async function withConfig<V extends Readonly<Record<string, unknown>>>(
  typed: V,
  dir: string,
  io: Io,
  opened: ReturnType<typeof openRepository>,
): Promise<{ readonly values: V; readonly fromConfig: ReadonlyMap<string, string> }> {
  if ((globalThis as { CRUSTCORE_NANO?: boolean }).CRUSTCORE_NANO !== true)
    return (await import('../config/run-config.js')).runValuesWithConfig(typed, dir, io, opened);
  return { values: typed, fromConfig: new Map() };
}

/**
 * The nano build defines `globalThis.CRUSTCORE_NANO` as `true`, and the bundler then drops every
 * `CRUSTCORE_NANO !== true` branch below with the code it guards (written out at each site: a
 * module constant would not be folded). Nano runs no backend that reports model use and refuses
 * stream-json, so the headless output stays out of its size budget.
 */
type Nano = { readonly CRUSTCORE_NANO?: boolean };

/** Stream-json, usage totals and the text usage line (render/headless.ts), loaded when a task runs. */
export async function runOutputFor(
  format: 'text' | 'json' | 'stream-json',
  io: { readonly stdout: Writable },
  sessionId: string,
  base: Narrator,
): Promise<RunOutput | null> {
  if ((globalThis as Nano).CRUSTCORE_NANO !== true) {
    const { runOutput } = await import('../render/headless.js');
    return runOutput(format, io.stdout, sessionId, base, VERSION);
  }
  if (format === 'stream-json') requireFullBuild('--output-format stream-json');
  return null;
}

/**
 * The live status line (render/status-line.ts): text output with stderr a terminal, full build
 * only (the define drops the import from nano). Without one, narration is `base` itself.
 */
async function statusLineFor(
  format: string,
  io: Io,
): Promise<{ narrate(base: Narrator): Narrator; clear(): void; stop(): void }> {
  if ((globalThis as Nano).CRUSTCORE_NANO !== true) {
    const { StatusLine, narrateWithStatus, wantsStatusLine } = await import('../render/status-line.js');
    if (wantsStatusLine(format, io.stderr, io.env)) {
      const line = new StatusLine(io.stderr, io.err);
      return { narrate: (base) => narrateWithStatus(base, line), clear: () => line.clear(), stop: () => line.stop() };
    }
  }
  return { narrate: (base) => base, clear: () => undefined, stop: () => undefined };
}

/** Repository memory for the task (full build only: the define drops this import from nano). */
async function repositoryMemory(...args: Parameters<typeof import('./task-memory.js').runTaskMemory>) {
  // The guarded branch form: esbuild folds the define and drops the branch, not code after a return.
  if ((globalThis as Nano).CRUSTCORE_NANO !== true) return (await import('./task-memory.js')).runTaskMemory(...args);
  return null;
}

/** `--dir` (default: the working directory) as a real path, or a usage error. */
function realDirOption(cwd: string, dir: string | undefined): string {
  try {
    return realpathSync(resolve(cwd, dir ?? '.'));
  } catch {
    throw new UsageError(`--dir ${dir}: no such directory`);
  }
}

/** The repository, opened once for the whole command: the config, the memory and the task each need it. */
function openedOnce(dir: string): ReturnType<typeof openRepository> {
  const opened = openRepository(dir);
  void opened.catch(() => undefined); // awaited later; a usage error before then must not leave it unhandled
  return opened;
}

export const runCommand: Command = {
  ...runSpec,
  async run(args, io) {
    const { values: typed } = parseArgs({ args: [...args], options: RUN_OPTIONS, strict: true });
    if (typed.goal === undefined || typed.goal.trim() === '') throw new UsageError('--goal is required');
    const dir = realDirOption(io.cwd, typed.dir);
    const opened = openedOnce(dir);
    const { values, fromConfig } = await withConfig(typed, dir, io, opened);
    const approve = values.approve ?? 'ask';
    if (approve !== 'auto' && approve !== 'ask' && approve !== 'deny')
      throw new UsageError('--approve takes auto, ask or deny');
    const format = values.json ? 'json' : (values['output-format'] ?? 'text');
    if (format !== 'text' && format !== 'json' && format !== 'stream-json')
      throw new UsageError('--output-format takes text, json or stream-json');
    const profile = (values.profile ?? 'supervised') as RiskProfile;
    if (!['readonly', 'supervised', 'full'].includes(profile))
      throw new UsageError('--profile takes readonly, supervised or full');
    const maxRevisits = values['max-revisits'] === undefined ? 3 : Number(values['max-revisits']);
    if (!Number.isInteger(maxRevisits) || maxRevisits < 0 || maxRevisits > 20)
      throw new UsageError('--max-revisits takes 0–20');
    const timeoutSeconds = values.timeout === undefined ? 1_800 : Number(values.timeout);
    if (!Number.isFinite(timeoutSeconds) || timeoutSeconds <= 0) throw new UsageError('--timeout takes seconds > 0');

    const backendName = values.backend ?? (values.worker !== undefined ? 'external' : undefined);
    if (backendName === undefined) {
      throw new UsageError(
        `say who writes the patch: --worker "<command>" or --backend ${['external', ...PACK_BACKENDS].join('|')}`,
      );
    }
    if (backendName === 'external' && values.worker === undefined)
      throw new UsageError('--backend external needs --worker "<command>"');
    if (backendName !== 'external' && !PACK_BACKENDS.includes(backendName)) {
      throw new UsageError(`unknown backend "${backendName}"; choose ${['external', ...PACK_BACKENDS].join(', ')}`);
    }
    const workerArgv = values.worker === undefined ? null : argvOption('worker', values.worker);
    refuseOptionsOfOtherBackends(values, backendName);
    // The native agent's model is set up before any worktree exists (nano has no native agent).
    if (backendName === 'native' && (globalThis as { CRUSTCORE_NANO?: boolean }).CRUSTCORE_NANO !== true)
      await (await import('./native-preflight.js')).preflightNativeModel(
        crustcoreHome(io.env),
        io.env,
        packOptionsOf(values, io.cwd),
      );

    let verifyArgv: Argv;
    // A verify command from the repository's own config is the repository's suggestion, like its test script.
    const verifyFromUser = values.verify !== undefined && fromConfig.get('verify') !== 'project';
    if (values.verify !== undefined) verifyArgv = argvOption('verify', values.verify);
    else {
      const detected = await detectVerifyCommand(dir);
      if (detected === null) {
        throw new UsageError(
          'no test command found (package.json test script, pytest, cargo, go, make test); pass --verify "<command>"',
        );
      }
      verifyArgv = detected.argv;
    }
    checkVerifyArgv(verifyArgv, verifyFromUser);

    // A typed --setup is the user's own command, like --verify; install scripts need their own flag.
    const setupArgv = values.setup === undefined ? null : argvOption('setup', values.setup);
    if (setupArgv !== null && values['no-environment']) throw new UsageError('--setup and --no-environment conflict');

    const canAsk = approve === 'ask' && io.stdin.isTTY === true && io.stderr.isTTY === true;
    // Nobody could answer the approval at the end: say so before any work is done.
    if (approve === 'ask' && !canAsk) throw new UsageError(NO_TERMINAL_FOR_ASK);
    const style = format === 'text' ? io.out : io.err;
    const taskId = randomIds.taskId();
    const status = await statusLineFor(format, io);
    const base = format === 'text' ? status.narrate(humanNarrator(io.stdout, style)) : silentNarrator;
    // Token and cost totals come from what the kernel was charged, in every format.
    const output = await runOutputFor(format, io, taskId, base);
    const narrator = output?.narrator ?? base;
    const stop = new AbortController();
    let interrupts = 0;
    const onSigint = (): void => {
      interrupts += 1;
      if (interrupts > 1) process.exit(ExitCode.interrupted);
      status.clear();
      writeLine(io.stderr, io.err.yellow('stopping at the next safe point (Ctrl+C again to quit now)'));
      stop.abort(new DOMException('interrupted by the user', 'AbortError'));
    };
    // kill, a closed terminal or a CI timeout: stop the same way, so the log ends with the task
    // killed (not left open) and the worker's process group is gone before we exit.
    const onTerminate = (signal: NodeJS.Signals): void => {
      stop.abort(new DOMException(`stopped by ${signal}`, 'AbortError'));
    };
    process.on('SIGINT', onSigint);
    process.on('SIGTERM', onTerminate);
    process.on('SIGHUP', onTerminate);
    // A plain timer held here, not AbortSignal.timeout(): inside AbortSignal.any() on Node 20 the
    // timeout signal can be garbage-collected and never fire (a --timeout 10 run went 600 s).
    const timeoutTimer = setTimeout(
      () => stop.abort(new DOMException('the time limit (--timeout) ran out', 'TimeoutError')),
      timeoutSeconds * 1_000,
    );
    if ((globalThis as Nano).CRUSTCORE_NANO !== true)
      await output?.init(dir, values.model ?? null, approve, backendName, verifyArgv);
    const memory = await repositoryMemory(io, dir, typed.goal, values, format, taskId, opened);
    try {
      const result = await runTask({
        ...memory?.taskOptions,
        dir,
        opened,
        goal: typed.goal,
        home: crustcoreHome(io.env),
        env: io.env,
        verifyArgv,
        verifyArgvFromUser: verifyFromUser,
        setupArgv,
        allowInstallScripts: values['allow-install-scripts'],
        environment: !values['no-environment'],
        makeBackend: async ({ workerCap, workerPathFor, toolGate, note }): Promise<CodingBackend> => {
          if (backendName === 'external' && workerArgv !== null)
            return new ExternalCommandBackend(workerCap(), {
              argv: workerArgv,
              pathFor: workerPathFor,
              // The worker's own files are found where the user typed the command.
              host: { cwd: io.cwd, path: io.env.PATH ?? '' },
            });
          const packOptions = packOptionsOf(values, io.cwd);
          return loadPackBackend(backendName, {
            workerCap,
            workerPathFor,
            toolGate,
            env: io.env,
            goal: values.goal ?? '',
            home: crustcoreHome(io.env),
            options: packOptions,
            note,
            repository: dir,
            ...((globalThis as Nano).CRUSTCORE_NANO !== true && output !== null
              ? { onEvent: output.onAgentEvent }
              : {}),
          });
        },
        approvals: approvalChannel(approve, canAsk ? { input: io.stdin, output: io.stderr, style: io.err } : null),
        approvalMode: approve,
        canAsk,
        narrator,
        ids: randomIds,
        taskId,
        profile,
        maxRevisits,
        commitMode: values.commit === true,
        // --timeout bounds the whole task twice: as the kernel's wall-time budget (seen at each
        // event, exit 3) and as a hard stop for a backend that has gone quiet.
        limits: { wallTimeMs: timeoutSeconds * 1_000 },
        signal: stop.signal,
        ...(values.ref === undefined ? {} : { ref: values.ref }),
      });
      const exit = EXIT_FOR_OUTCOME[result.outcome.kind];
      const learned = await memory?.finish(taskId);
      if ((globalThis as Nano).CRUSTCORE_NANO !== true) output?.result(result.outcome, exit, result.projectDir);
      if (format === 'json') {
        writeLine(
          io.stdout,
          JSON.stringify({
            taskId,
            outcome: result.outcome.kind,
            exitCode: exit,
            reason: result.outcome.reason,
            attempts: result.outcome.attempts,
            patchHash: result.outcome.patchHash,
            applied: result.outcome.journalId,
            lastDiagnosis: result.outcome.lastDiagnosis,
            risks: result.risks,
            hint: autoRiskHint(result, approve),
            worker: result.worker,
            verified: withAllRisks(result),
            stateDir: result.projectDir,
            inspect: result.inspect === null ? null : { ok: result.inspect.ok, frames: result.inspect.chain.frames },
            ...learned,
            ...(((globalThis as Nano).CRUSTCORE_NANO !== true && output?.jsonFields()) || {
              usage: null,
              costUsd: null,
              durationMs: null,
              schemaVersion: 1,
            }),
          }),
        );
      } else if (format === 'text') {
        if (result.outcome.kind === 'environment')
          writeLine(io.stderr, `${io.err.red('error:')} ${sanitizeForTerminal(result.outcome.reason)}`);
        const hint = autoRiskHint(result, approve);
        if (hint !== null) writeLine(io.stderr, `${io.err.yellow('hint:')} ${hint}`);
        if ((globalThis as Nano).CRUSTCORE_NANO !== true && output !== null)
          writeLine(io.stdout, io.out.dim(output.textLine()));
        writeLine(io.stdout, io.out.dim(`log: crustcore inspect --dir ${result.projectDir} --task ${taskId}`));
      }
      return exit;
    } catch (error) {
      if (error instanceof LedgerBusyError) {
        writeLine(io.stderr, `${io.err.red('busy:')} ${error.message}`);
        if ((globalThis as Nano).CRUSTCORE_NANO !== true) output?.fail('busy', ExitCode.busy, error.message);
        return ExitCode.busy;
      }
      if (error instanceof SetupError) {
        writeLine(io.stderr, `${io.err.red('error:')} ${error.message}`);
        if ((globalThis as Nano).CRUSTCORE_NANO !== true) output?.fail('internal', ExitCode.internal, error.message);
        return ExitCode.internal;
      }
      // A script reading the stream still gets its last line; the error itself goes to stderr as before.
      if ((globalThis as Nano).CRUSTCORE_NANO !== true) {
        const usage = error instanceof UsageError;
        output?.fail(usage ? 'usage' : 'internal', usage ? ExitCode.usage : ExitCode.internal, String(error));
      }
      throw error;
    } finally {
      status.stop();
      await memory?.finish(null);
      clearTimeout(timeoutTimer);
      process.off('SIGINT', onSigint);
      process.off('SIGTERM', onTerminate);
      process.off('SIGHUP', onTerminate);
    }
  },
};
