/**
 * `crustcore demo`: the whole verified loop on a sample repository in a temp
 * directory, narrated. A deterministic scripted backend makes two attempts:
 * the first fixes one bug and fails verification, the classifier's diagnosis
 * goes back to the backend, the second attempt passes in a fresh sandboxed
 * worktree, the approval gate lets it through (`--approve auto`), the apply
 * journal writes it atomically, and `inspect` checks the log and replays it.
 */
import { mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { randomIds, runTask, SetupError } from '@crustcore/runtime';
import { type Command, UsageError } from '../cli/command.js';
import { requireFullBuild } from '../cli/edition.js';
import { ExitCode } from '../cli/exit-codes.js';
import { type Io, writeLine } from '../cli/output.js';
import { makeSampleRepository } from '../demo/make-sample.js';
import { SAMPLE_FILES, SCRIPTED_EDITS } from '../demo/sample-repo.js';
import { ScriptedBackend } from '../demo/scripted-backend.js';
import { approvalChannel } from '../render/approval-channel.js';
import { humanNarrator, silentNarrator } from '../render/narrator.js';
import { runOutputFor } from './run.js';
import { demoSpec } from './specs.js';

/** The nano build defines `globalThis.CRUSTCORE_NANO` as `true`; the bundler folds the checks. */
type Nano = { readonly CRUSTCORE_NANO?: boolean };

export const demoCommand: Command = {
  ...demoSpec,
  async run(args, io) {
    const { values } = parseArgs({
      args: [...args],
      options: {
        json: { type: 'boolean', default: false },
        'output-format': { type: 'string' },
        agent: { type: 'string', default: 'scripted' },
      },
      strict: true,
    });
    const json = values.json === true;
    const streamJson = values['output-format'] === 'stream-json';
    const agent = values.agent;
    if (agent !== 'scripted' && agent !== 'native') throw new UsageError('--agent takes scripted or native');
    return runDemo(io, { json, streamJson, native: agent === 'native' });
  },
};

/** The demo's `--json` document. */
function demoJson(
  { outcome, inspect, projectDir }: Awaited<ReturnType<typeof runTask>>,
  at: { readonly taskId: string; readonly repoDir: string; readonly applied: boolean; readonly elapsedMs: number },
) {
  return {
    ok: at.applied && inspect?.ok === true,
    taskId: at.taskId,
    outcome: outcome.kind,
    reason: outcome.reason,
    attempts: outcome.attempts,
    patchHash: outcome.patchHash,
    repo: at.repoDir,
    stateDir: projectDir,
    inspect:
      inspect === null
        ? null
        : {
            ok: inspect.ok,
            frames: inspect.chain.frames,
            receipts: inspect.receiptsChecked,
            artifacts: inspect.artifactsChecked,
            replay: inspect.replay ?? null,
          },
    elapsedMs: at.elapsedMs,
  };
}

async function runDemo(
  io: Io,
  options: { readonly json: boolean; readonly streamJson: boolean; readonly native: boolean },
): Promise<ExitCode> {
  const started = performance.now();
  const s = io.out;
  const say = (text = ''): void => {
    if (!options.json && !options.streamJson) writeLine(io.stdout, text);
  };
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'crustcore-demo-')));
  const repoDir = join(root, 'calculator');
  const home = join(root, 'crustcore-home');

  say(s.bold('CrustCore demo') + s.dim(' — a coding task, verified before it touches your tree'));
  say();
  say(`${s.bold('1.')} A sample repository with two bugs and a failing test suite`);
  await makeSampleRepository(repoDir);
  say(`   ${s.cyan(repoDir)}  ${s.dim('(git repo; `npm test` runs node --test)')}`);
  say();
  say(
    `${s.bold('2.')} The task, run by ${options.native ? 'the native agent loop (a recorded model, no API key)' : 'a scripted backend'} in a disposable worktree`,
  );
  say(s.dim('   attempts are sandboxed (bubblewrap, no network); every step is an event in a hash-chained log'));
  say();

  const taskId = randomIds.taskId();
  const goal = 'make the test suite pass (node --test)';
  const base = options.json || options.streamJson ? silentNarrator : humanNarrator(io.stdout, s);
  // Nano refuses stream-json here (runOutputFor); its build drops the stream's call sites below.
  const output = options.streamJson ? await runOutputFor('stream-json', io, taskId, base) : null;
  const narrator = output?.narrator ?? base;
  if ((globalThis as Nano).CRUSTCORE_NANO !== true)
    await output?.init(repoDir, null, 'auto', options.native ? 'native' : 'scripted', ['node', '--test']);
  let result: Awaited<ReturnType<typeof runTask>>;
  try {
    result = await runTask({
      dir: repoDir,
      goal,
      home,
      env: io.env,
      // node --test directly: the same suite as `npm test`, without npm's start-up cost.
      verifyArgv: ['node', '--test'],
      verifyArgvFromUser: false,
      makeBackend: async ({ toolGate }) => {
        if (!options.native) {
          return new ScriptedBackend(
            SCRIPTED_EDITS.map((e) => ({ summary: e.summary, path: 'src/calc.js', find: e.find, replace: e.replace })),
          );
        }
        requireFullBuild('demo --agent native');
        // The real native loop (tools, policy, receipts) driven by a recorded model trajectory: no API key.
        const agent = (await import('@crustcore/agent')) as typeof import('@crustcore/agent');
        return agent.createBackend('native', {
          env: io.env,
          goal,
          toolGate,
          home,
          options: {},
          trajectory: agent.demoTrajectory(),
          ...((globalThis as Nano).CRUSTCORE_NANO !== true && output !== null ? { onEvent: output.onAgentEvent } : {}),
        });
      },
      approvals: approvalChannel('auto', null),
      approvalMode: 'auto',
      canAsk: false,
      narrator,
      ids: randomIds,
      taskId,
    });
  } catch (error) {
    if (error instanceof SetupError) {
      writeLine(io.stderr, `${io.err.red('error:')} ${error.message}`);
      if ((globalThis as Nano).CRUSTCORE_NANO !== true) output?.fail('internal', ExitCode.internal, error.message);
      return ExitCode.internal;
    }
    throw error;
  }
  const { outcome, inspect, projectDir } = result;
  const elapsedMs = Math.round(performance.now() - started);
  const fixed = readFileSync(join(repoDir, 'src/calc.js'), 'utf8');
  const applied = outcome.kind === 'completed' && fixed !== SAMPLE_FILES['src/calc.js'];

  if (options.json) {
    writeLine(io.stdout, JSON.stringify(demoJson(result, { taskId, repoDir, applied, elapsedMs })));
    return applied && inspect?.ok === true ? ExitCode.ok : ExitCode.internal;
  }
  if ((globalThis as Nano).CRUSTCORE_NANO !== true && output !== null) {
    output.result(outcome, applied ? ExitCode.ok : ExitCode.internal, projectDir);
    return applied ? ExitCode.ok : ExitCode.internal;
  }

  say();
  say(
    `${s.bold('3.')} Your tree now ${applied ? 'has the verified fix' : s.red('is unchanged')}: ${s.cyan(join(repoDir, 'src/calc.js'))}`,
  );
  for (const line of fixed.split('\n').filter((l) => l.includes('return'))) say(`   ${s.green(line.trim())}`);
  say();
  say(`${s.bold('4.')} ${s.cyan('crustcore inspect')} checks the log and replays it through a fresh kernel`);
  if (inspect === null) {
    say(`   ${s.red('inspect could not run')}`);
  } else {
    const replay = inspect.replay;
    say(
      `   ${inspect.ok ? s.green('intact') : s.red('FAILED')}: ${inspect.chain.frames} frames hash-chained, ${inspect.artifactsChecked} artifacts checked${
        replay ? `, replay of ${replay.events} kernel events reproduced ${replay.actions} actions byte for byte` : ''
      }`,
    );
    if (inspect.failure)
      say(
        `   ${s.red(`first bad frame: seq ${inspect.failure.seq} — ${inspect.failure.reason}: ${inspect.failure.detail}`)}`,
      );
  }
  say();
  say(s.dim(`done in ${(elapsedMs / 1000).toFixed(1)} s — state kept in ${root}`));
  say();
  say(s.bold('Next:'));
  say(`  crustcore inspect --dir ${projectDir}`);
  say(`  crustcore run --dir <your repo> --goal "<what to do>" --worker "<command>" --approve ask`);
  say(`  crustcore doctor          ${s.dim('# what this machine can sandbox')}`);
  return applied && inspect?.ok === true ? ExitCode.ok : ExitCode.internal;
}
