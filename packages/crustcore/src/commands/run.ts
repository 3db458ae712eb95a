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
import { parseArgs } from 'node:util';
import type { RiskProfile } from '@crustcore/kernel';
import type { TaskOutcomeKind } from '@crustcore/runtime';
import { randomIds, runTask, SetupError } from '@crustcore/runtime';
import {
  type Argv,
  type CodingBackend,
  detectVerifyCommand,
  ExternalCommandBackend,
  splitArgv,
} from '@crustcore/verify';
import { type Command, UsageError } from '../cli/command.js';
import { ExitCode } from '../cli/exit-codes.js';
import { writeLine } from '../cli/output.js';
import { crustcoreHome } from '../cli/paths.js';
import { approvalChannel } from '../render/approval-channel.js';
import { humanNarrator, jsonLinesNarrator, silentNarrator } from '../render/narrator.js';
import { loadPackBackend, PACK_BACKENDS } from './pack-backends.js';

const USAGE =
  'crustcore run --dir DIR --goal TEXT [--verify ARGV] [--worker ARGV | --backend NAME] [--approve auto|ask|deny] [--commit] [--max-revisits N] [--timeout SECONDS] [--profile readonly|supervised|full] [--ref REF] [--setup ARGV] [--allow-install-scripts] [--no-environment] [--json | --output-format text|json|stream-json]\n       native agent: [--model PROVIDER/MODEL] [--models-config FILE] [--thinking off|low|medium|high] [--max-turns N] [--resume ID|latest] [--replay FILE] [--record FILE]';

export const EXIT_FOR_OUTCOME: Readonly<Record<TaskOutcomeKind, ExitCode>> = {
  completed: ExitCode.ok,
  'verify-failed': ExitCode.verifyFailed,
  'budget-exhausted': ExitCode.budgetExhausted,
  denied: ExitCode.denied,
  drift: ExitCode.drift,
  killed: ExitCode.interrupted,
  internal: ExitCode.internal,
};

function argvOption(name: string, text: string): Argv {
  const split = splitArgv(text);
  if (split._tag === 'Left') throw new UsageError(`--${name}: ${split.left.message}`);
  return split.right;
}

export const runCommand: Command = {
  name: 'run',
  summary:
    'run one task: a backend proposes a patch, CrustCore verifies it in a sandbox, then applies it with approval',
  usage: USAGE,
  async run(args, io) {
    const { values } = parseArgs({
      args: [...args],
      options: {
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
        setup: { type: 'string' },
        'allow-install-scripts': { type: 'boolean', default: false },
        'no-environment': { type: 'boolean', default: false },
      },
      strict: true,
    });
    if (values.goal === undefined || values.goal.trim() === '') throw new UsageError('--goal is required');
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
    const nativeOnly = (['resume', 'thinking', 'max-turns'] as const).filter((name) => values[name] !== undefined);
    if (nativeOnly.length > 0 && backendName !== 'native')
      throw new UsageError(`${nativeOnly.map((name) => `--${name}`).join(', ')}: only the native agent takes this`);

    let dir: string;
    try {
      dir = realpathSync(resolve(io.cwd, values.dir ?? '.'));
    } catch {
      throw new UsageError(`--dir ${values.dir}: no such directory`);
    }
    let verifyArgv: Argv;
    const verifyFromUser = values.verify !== undefined;
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

    // A typed --setup is the user's own command, like --verify; install scripts need their own flag.
    const setupArgv = values.setup === undefined ? null : argvOption('setup', values.setup);
    if (setupArgv !== null && values['no-environment']) throw new UsageError('--setup and --no-environment conflict');

    const canAsk = approve === 'ask' && io.stdin.isTTY === true && io.stderr.isTTY === true;
    const style = format === 'text' ? io.out : io.err;
    const narrator =
      format === 'stream-json'
        ? jsonLinesNarrator(io.stdout)
        : format === 'json'
          ? silentNarrator
          : humanNarrator(io.stdout, style);
    const abort = new AbortController();
    let interrupts = 0;
    const onSigint = (): void => {
      interrupts += 1;
      if (interrupts > 1) process.exit(ExitCode.denied);
      writeLine(io.stderr, io.err.yellow('stopping at the next safe point (Ctrl+C again to quit now)'));
      abort.abort();
    };
    process.on('SIGINT', onSigint);
    const taskId = randomIds.taskId();
    try {
      const result = await runTask({
        dir,
        goal: values.goal,
        home: crustcoreHome(io.env),
        env: io.env,
        verifyArgv,
        verifyArgvFromUser: verifyFromUser,
        setupArgv,
        allowInstallScripts: values['allow-install-scripts'],
        environment: !values['no-environment'],
        makeBackend: async ({ workerCap, toolGate, note }): Promise<CodingBackend> => {
          if (backendName === 'external' && workerArgv !== null)
            return new ExternalCommandBackend(workerCap(), { argv: workerArgv });
          const packOptions: Record<string, string> = {};
          if (values.model !== undefined) packOptions.model = values.model;
          if (values.replay !== undefined) packOptions.replay = resolve(io.cwd, values.replay);
          if (values.record !== undefined) packOptions.record = resolve(io.cwd, values.record);
          if (values['models-config'] !== undefined)
            packOptions.modelsConfig = resolve(io.cwd, values['models-config']);
          if (values.resume !== undefined) packOptions.resume = values.resume;
          if (values.thinking !== undefined) packOptions.thinking = values.thinking;
          if (values['max-turns'] !== undefined) packOptions.maxTurns = values['max-turns'];
          return loadPackBackend(backendName, {
            workerCap,
            toolGate,
            env: io.env,
            goal: values.goal ?? '',
            home: crustcoreHome(io.env),
            options: packOptions,
            note,
            ...(format === 'stream-json'
              ? { onEvent: (event: unknown) => io.stdout.write(`${JSON.stringify({ type: 'agent', event })}\n`) }
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
        signal: AbortSignal.any([abort.signal, AbortSignal.timeout(timeoutSeconds * 1_000)]),
        ...(values.ref === undefined ? {} : { ref: values.ref }),
      });
      const exit = EXIT_FOR_OUTCOME[result.outcome.kind];
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
            verified: result.verifiedEvidence,
            stateDir: result.projectDir,
            inspect: result.inspect === null ? null : { ok: result.inspect.ok, frames: result.inspect.chain.frames },
          }),
        );
      } else if (format === 'text') {
        writeLine(io.stdout, io.out.dim(`log: crustcore inspect --dir ${result.projectDir} --task ${taskId}`));
      }
      return exit;
    } catch (error) {
      if (error instanceof SetupError) {
        writeLine(io.stderr, `${io.err.red('error:')} ${error.message}`);
        return ExitCode.internal;
      }
      throw error;
    } finally {
      process.off('SIGINT', onSigint);
    }
  },
};
