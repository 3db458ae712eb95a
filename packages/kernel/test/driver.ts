/**
 * Test driver: turns short "intents" into well-formed kernel events, using
 * what the kernel asked for so far (pending approvals, proposed patches), so
 * random sequences reach deep states instead of bouncing off validation.
 */
import fc from 'fast-check';
import type { Action, ApprovalId, Hash32, KernelEvent, TaskId, ToolCallId } from '../src/index.js';
import { createKernel, type Kernel, makeId, type Operation, sha256Hex } from '../src/index.js';

export const TASKS = [makeId('TaskId', 'one'), makeId('TaskId', 'two')] as const;
export const PATCHES = [sha256Hex('patch-a'), sha256Hex('patch-b')] as const;
const TREE = sha256Hex('tree');
const LOG = sha256Hex('log');

export type Intent =
  | {
      readonly i: 'create';
      readonly t: number;
      readonly mode: 'auto' | 'ask' | 'deny';
      readonly canAsk: boolean;
      readonly fail: boolean;
    }
  | {
      readonly i: 'ready' | 'planned' | 'cancel' | 'kill' | 'applied' | 'integrationFailed' | 'failed';
      readonly t: number;
    }
  | { readonly i: 'model'; readonly t: number; readonly tokens: number }
  | { readonly i: 'tool'; readonly t: number; readonly op: number; readonly actor: number }
  | { readonly i: 'toolDone'; readonly t: number; readonly which: number }
  | { readonly i: 'propose'; readonly t: number; readonly p: number; readonly risky: boolean }
  | { readonly i: 'verified'; readonly t: number; readonly p: number }
  | { readonly i: 'rejectPatch'; readonly t: number }
  | {
      readonly i: 'resolve';
      readonly t: number;
      readonly grant: boolean;
      readonly human: boolean;
      readonly tamper: number;
    }
  /** Time passes with no event (the kernel has no clock events): the next event arrives later. */
  | { readonly i: 'wait'; readonly advanceMs: number }
  | { readonly i: 'subagent'; readonly t: number };

export const OPERATIONS: readonly Operation[] = [
  { op: 'fs.read', path: 'src/a.ts' },
  { op: 'fs.write', path: 'src/a.ts' },
  { op: 'exec', argv: ['npm', 'test'], cwd: '.', profile: 'verify', recognizedRunner: true },
  { op: 'exec', argv: ['curl', 'x'], cwd: '.', profile: 'build', recognizedRunner: false },
  { op: 'git.push', remote: 'origin', branch: 'main', force: false },
  { op: 'git.push', remote: 'origin', branch: 'main', force: true },
  { op: 'net.connect', host: 'example.com', port: 443 },
  { op: 'secret.use', handle: 'secret://GH' },
];

const t = fc.integer({ min: 0, max: TASKS.length - 1 });
export const intentArb: fc.Arbitrary<Intent> = fc.oneof(
  fc.record({
    i: fc.constant('create' as const),
    t,
    mode: fc.constantFrom('auto' as const, 'ask' as const, 'deny' as const),
    canAsk: fc.boolean(),
    fail: fc.boolean(),
  }),
  fc.record({
    i: fc.constantFrom(
      'ready' as const,
      'planned' as const,
      'cancel' as const,
      'kill' as const,
      'applied' as const,
      'integrationFailed' as const,
      'failed' as const,
    ),
    t,
  }),
  fc.record({ i: fc.constant('model' as const), t, tokens: fc.integer({ min: 0, max: 3_000 }) }),
  fc.record({
    i: fc.constant('tool' as const),
    t,
    op: fc.integer({ min: 0, max: OPERATIONS.length - 1 }),
    actor: fc.integer({ min: 0, max: 2 }),
  }),
  fc.record({ i: fc.constant('toolDone' as const), t, which: fc.integer({ min: 0, max: 5 }) }),
  fc.record({ i: fc.constant('propose' as const), t, p: fc.integer({ min: 0, max: 1 }), risky: fc.boolean() }),
  fc.record({ i: fc.constant('verified' as const), t, p: fc.integer({ min: 0, max: 1 }) }),
  fc.record({ i: fc.constant('rejectPatch' as const), t }),
  fc.record({
    i: fc.constant('resolve' as const),
    t,
    grant: fc.boolean(),
    human: fc.boolean(),
    tamper: fc.integer({ min: 0, max: 4 }),
  }),
  fc.record({ i: fc.constant('wait' as const), advanceMs: fc.integer({ min: 0, max: 20 * 60_000 }) }),
  fc.record({ i: fc.constant('subagent' as const), t }),
);

interface PendingApproval {
  readonly approvalId: ApprovalId;
  readonly nonce: string;
  readonly opHash: Hash32;
}

/** Feeds intents to a kernel and records (event, actions) pairs. */
export class Driver {
  readonly kernel: Kernel;
  readonly log: { event: KernelEvent; actions: readonly Action[] }[] = [];
  #seq = 0;
  #at = 1_700_000_000_000;
  #counter = 0;
  readonly #approvals = new Map<TaskId, PendingApproval[]>();
  readonly #toolCalls = new Map<TaskId, ToolCallId[]>();

  constructor(kernel: Kernel = createKernel({ defaultMaxRevisits: 3 })) {
    this.kernel = kernel;
  }

  feed(event: KernelEvent): readonly Action[] {
    const actions = this.kernel.step(event);
    this.log.push({ event, actions });
    for (const action of actions) {
      if (action.kind === 'RequestApproval') {
        const list = this.#approvals.get(action.taskId) ?? [];
        list.push({ approvalId: action.approvalId, nonce: action.nonce, opHash: action.opHash });
        this.#approvals.set(action.taskId, list);
      }
      if (action.kind === 'ExecuteTool') {
        const list = this.#toolCalls.get(action.taskId) ?? [];
        list.push(action.toolCallId);
        this.#toolCalls.set(action.taskId, list);
      }
    }
    return actions;
  }

  #head(taskId?: TaskId): { seq: never; at: number } & Record<string, unknown> {
    this.#seq += 1;
    this.#at += 1_000;
    return { seq: this.#seq as never, at: this.#at, ...(taskId ? { taskId } : {}) };
  }

  #id(kind: 'ToolCallId' | 'ApprovalId'): string {
    this.#counter += 1;
    return makeId(kind, `x${this.#counter}`);
  }

  eventFor(intent: Exclude<Intent, { i: 'wait' }>): KernelEvent {
    const taskId = TASKS[intent.t] as TaskId;
    const h = this.#head(taskId);
    switch (intent.i) {
      case 'create':
        return {
          kind: 'TaskCreated',
          ...h,
          goal: 'fix the failing test',
          profile: 'supervised',
          approvalMode: intent.mode,
          canAsk: intent.canAsk,
          limits: { tokens: 10_000 },
          onBudgetExhausted: intent.fail ? 'fail' : 'pause',
        } as unknown as KernelEvent;
      case 'ready':
        return { kind: 'WorkspaceReady', ...h, baseCommit: 'abc123' } as unknown as KernelEvent;
      case 'planned':
        return { kind: 'TaskPlanned', ...h, summary: 'plan' } as unknown as KernelEvent;
      case 'cancel':
        return { kind: 'TaskCancelled', ...h, reason: 'user' } as unknown as KernelEvent;
      case 'kill':
        return { kind: 'TaskKilled', ...h, reason: 'user' } as unknown as KernelEvent;
      case 'failed':
        return { kind: 'TaskFailed', ...h, reason: 'internal', detail: 'boom' } as unknown as KernelEvent;
      case 'applied':
        return { kind: 'PatchApplied', ...h, patchHash: PATCHES[0], journalId: 'j1' } as unknown as KernelEvent;
      case 'integrationFailed':
        return { kind: 'IntegrationFailed', ...h, reason: 'drift', detail: 'a.ts changed' } as unknown as KernelEvent;
      case 'model':
        return {
          kind: 'ModelOutputReceived',
          ...h,
          inputTokens: intent.tokens,
          outputTokens: 10,
          costMicros: 5,
        } as unknown as KernelEvent;
      case 'tool':
        return {
          kind: 'ToolCallRequested',
          ...h,
          toolCallId: this.#id('ToolCallId'),
          tool: 'x',
          actor: (['agent', 'subagent', 'worker'] as const)[intent.actor],
          operation: OPERATIONS[intent.op],
          approvalId: this.#id('ApprovalId'),
          nonce: `n${this.#counter}`,
        } as unknown as KernelEvent;
      case 'toolDone': {
        const calls = this.#toolCalls.get(taskId) ?? [];
        const id = calls[intent.which % Math.max(1, calls.length)] ?? makeId('ToolCallId', 'none');
        return {
          kind: 'ToolCallCompleted',
          ...h,
          toolCallId: id,
          ok: true,
          outputBytes: 100,
          receiptHash: LOG,
        } as unknown as KernelEvent;
      }
      case 'propose':
        return {
          kind: 'PatchProposed',
          ...h,
          patchHash: PATCHES[intent.p],
          selfClaimedDone: true,
          filesChanged: 1,
          risks: intent.risky ? ['tests-weakened'] : [],
        } as unknown as KernelEvent;
      case 'verified':
        return {
          kind: 'PatchVerified',
          ...h,
          patchHash: PATCHES[intent.p],
          treeHash: TREE,
          baseCommit: 'abc123',
          argv: ['npm', 'test'],
          profile: 'verify',
          exitCode: 0,
          stdoutHash: LOG,
          stderrHash: LOG,
          risks: [],
          approvalId: this.#id('ApprovalId'),
          nonce: `n${this.#counter}`,
        } as unknown as KernelEvent;
      case 'rejectPatch':
        return {
          kind: 'PatchRejected',
          ...h,
          category: 'assertion',
          summary: 'expected 2 got 3',
          failingTests: ['adds'],
        } as unknown as KernelEvent;
      case 'resolve': {
        const pending = this.#approvals.get(taskId) ?? [];
        const latest = pending[pending.length - 1] ?? {
          approvalId: makeId('ApprovalId', 'none'),
          nonce: 'n',
          opHash: LOG,
        };
        return {
          kind: 'ApprovalResolved',
          ...h,
          approvalId: intent.tamper === 1 ? makeId('ApprovalId', 'forged') : latest.approvalId,
          decision: intent.grant ? 'granted' : 'denied',
          by: intent.human ? 'human' : 'policy-auto',
          nonce: intent.tamper === 2 ? 'wrong-nonce' : latest.nonce,
          opHash: intent.tamper === 3 ? sha256Hex('other op') : latest.opHash,
        } as unknown as KernelEvent;
      }
      case 'subagent':
        return {
          kind: 'SubagentRequested',
          ...h,
          subagentId: `sa${this.#seq}`,
          role: 'researcher',
        } as unknown as KernelEvent;
    }
  }

  run(intents: readonly Intent[]): void {
    for (const intent of intents) {
      if (intent.i === 'wait') this.#at += intent.advanceMs;
      else this.feed(this.eventFor(intent));
    }
  }
}

/** The happy path from creation to a completed, applied patch. */
export const HAPPY_PATH: readonly Intent[] = [
  { i: 'create', t: 0, mode: 'auto', canAsk: false, fail: true },
  { i: 'ready', t: 0 },
  { i: 'planned', t: 0 },
  { i: 'tool', t: 0, op: 1, actor: 0 },
  { i: 'toolDone', t: 0, which: 0 },
  { i: 'propose', t: 0, p: 0, risky: false },
  { i: 'verified', t: 0, p: 0 },
  { i: 'resolve', t: 0, grant: true, human: false, tamper: 0 },
  { i: 'applied', t: 0 },
];
