/**
 * Helpers for the native agent's golden tasks: a temp git repository and a
 * private CRUSTCORE_HOME per test, and `runNative`, which drives the real
 * runtime (`runTask`: kernel, ledger, sandboxed verify, apply journal) with
 * the native backend created exactly as the CLI creates it.
 */

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { type AgentEvent, createBackend, type ExtraToolsFactory, type NativeAgentBackend } from '@crustcore/agent';
import type { RiskProfile } from '@crustcore/kernel';
import { exportJsonl } from '@crustcore/ledger';
import type { Trajectory } from '@crustcore/net';
import type { ApprovalChannel, ToolGate } from '@crustcore/runtime';
import { type RunTaskResult, randomIds, runTask } from '@crustcore/runtime';
import type { SandboxExecCap } from '@crustcore/sandbox';
import { afterAll } from 'vitest';
import { SAMPLE_FILES } from '../../packages/crustcore/src/demo/sample-repo.js';
import { approvalChannel } from '../../packages/crustcore/src/render/approval-channel.js';
import { silentNarrator } from '../../packages/crustcore/src/render/narrator.js';

export const GOLDEN_AGENT_DIR = resolve(import.meta.dirname);
export const DEMO_TRAJECTORY = join(GOLDEN_AGENT_DIR, 'demo-trajectory.json');

export interface Box {
  readonly root: string;
  readonly repo: string;
  readonly home: string;
}

const GIT_ENV = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@t',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@t',
};

const boxes: string[] = [];
afterAll(() => {
  for (const dir of boxes.splice(0)) rmSync(dir, { recursive: true, force: true });
});

export function makeBox(files: Readonly<Record<string, string>>): Box {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'crustcore-agent-golden-')));
  boxes.push(root);
  const repo = join(root, 'repo');
  const home = join(root, 'home');
  for (const [path, text] of Object.entries(files)) {
    const full = join(repo, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
  }
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: repo, stdio: 'pipe', env: { ...GIT_ENV, HOME: root } });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'base');
  mkdirSync(home, { recursive: true });
  return { root, repo, home };
}

/** The demo's calculator: add() subtracts, multiply() adds; `node --test` fails on both. */
export const CALC_REPO: Readonly<Record<string, string>> = SAMPLE_FILES;

export interface NativeRun {
  readonly result: RunTaskResult;
  readonly events: AgentEvent[];
  readonly backend: NativeAgentBackend;
}

export async function runNative(
  box: Box,
  options: {
    readonly goal?: string;
    readonly replay?: string;
    readonly trajectory?: Trajectory;
    readonly modelsConfig?: string;
    readonly model?: string;
    readonly env?: Readonly<Record<string, string>>;
    readonly approvals?: ApprovalChannel;
    readonly approvalMode?: 'auto' | 'ask' | 'deny';
    readonly canAsk?: boolean;
    readonly profile?: RiskProfile;
    readonly maxRevisits?: number;
    readonly verifyArgv?: readonly [string, ...string[]];
    readonly extraOptions?: Readonly<Record<string, string>>;
    /** false: run without the task environment (as `--no-environment`). */
    readonly environment?: boolean;
    /** Tools from outside the agent (the MCP gateway), per attempt. */
    readonly extraTools?: ExtraToolsFactory;
    /** The same, built with the task's gate and worker capability (the MCP gateway's code mode needs both). */
    readonly extraToolsFor?: (task: {
      readonly toolGate: ToolGate;
      readonly workerCap: () => SandboxExecCap;
    }) => ExtraToolsFactory;
  },
): Promise<NativeRun> {
  const events: AgentEvent[] = [];
  let backend: NativeAgentBackend | null = null;
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: box.root,
    CRUSTCORE_HOME: box.home,
    ...(options.env ?? {}),
  };
  const goal = options.goal ?? 'make the test suite pass (node --test)';
  const result = await runTask({
    dir: box.repo,
    goal,
    home: box.home,
    env,
    verifyArgv: options.verifyArgv ?? ['node', '--test'],
    verifyArgvFromUser: true,
    ...(options.environment === undefined ? {} : { environment: options.environment }),
    // As the CLI does: the worker capability and PATH carry the task environment to the agent's commands.
    makeBackend: async ({ toolGate, workerCap, workerPathFor }) => {
      const made = await createBackend('native', {
        env,
        goal,
        toolGate,
        workerCap,
        workerPathFor,
        home: box.home,
        options: {
          ...(options.replay === undefined ? {} : { replay: options.replay }),
          ...(options.modelsConfig === undefined ? {} : { modelsConfig: options.modelsConfig }),
          ...(options.model === undefined ? {} : { model: options.model }),
          ...(options.extraOptions ?? {}),
        },
        onEvent: (event) => events.push(event),
        ...(options.trajectory === undefined ? {} : { trajectory: options.trajectory }),
        ...(options.extraTools === undefined ? {} : { extraTools: options.extraTools }),
        ...(options.extraToolsFor === undefined ? {} : { extraTools: options.extraToolsFor({ toolGate, workerCap }) }),
      });
      backend = made as NativeAgentBackend;
      return made;
    },
    approvals: options.approvals ?? approvalChannel(options.approvalMode ?? 'auto', null),
    approvalMode: options.approvalMode ?? 'auto',
    canAsk: options.canAsk ?? false,
    ...(options.profile === undefined ? {} : { profile: options.profile }),
    narrator: silentNarrator,
    ids: randomIds,
    taskId: randomIds.taskId(),
    maxRevisits: options.maxRevisits ?? 3,
  });
  if (backend === null) throw new Error('the backend was never created');
  return { result, events, backend };
}

/** The task's ledger as exported JSONL objects (kind, payload, …). */
export function ledgerFrames(logPath: string): Record<string, unknown>[] {
  const lines: string[] = [];
  exportJsonl({ logPath }, (line) => lines.push(line));
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Every session entry the task wrote (all session files of the home). */
export function sessionEntries(home: string): Record<string, unknown>[] {
  const root = join(home, 'sessions');
  const entries: Record<string, unknown>[] = [];
  for (const repo of readdirSync(root)) {
    for (const name of readdirSync(join(root, repo))) {
      if (!name.endsWith('.jsonl')) continue;
      for (const line of readFileSync(join(root, repo, name), 'utf8').split('\n')) {
        if (line.trim() !== '') entries.push(JSON.parse(line) as Record<string, unknown>);
      }
    }
  }
  return entries;
}

/** Tool result messages the model was given, from the session. */
export function toolMessages(home: string): { toolName: string; content: string; isError?: boolean }[] {
  return sessionEntries(home)
    .filter((e) => e.type === 'message' && (e.message as { role?: string }).role === 'tool')
    .map((e) => e.message as { toolName: string; content: string; isError?: boolean });
}
