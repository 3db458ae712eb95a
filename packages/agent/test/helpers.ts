/**
 * Test doubles for the agent's boundaries: a tool gate that records every
 * request and issues real receipts (the ledger's ReceiptIssuer, no log), a
 * provider that records requests and plays a script, and temp worktrees.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { makeId } from '@crustcore/kernel';
import { ReceiptIssuer, ReceiptKey } from '@crustcore/ledger';
import { type ModelProvider, type ModelRequest, ReplayProvider, type StreamEvent } from '@crustcore/net';
import { afterAll } from 'vitest';
import { type ScriptedTurn, scriptedTrajectory } from '../src/demo/trajectory-script.js';
import { AgentWorkspace } from '../src/index.js';
import type { ModelUsage, ToolCallOutcome, ToolCallRequest, ToolExecution, ToolGate } from '../src/tool-gate.js';

const created: string[] = [];
afterAll(() => {
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
});

export function tempTree(files: Readonly<Record<string, string>>): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'agent-test-')));
  created.push(root);
  for (const [path, text] of Object.entries(files)) {
    const full = join(root, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
  }
  return root;
}

export function openWorkspace(root: string, scrub?: (text: string) => string): AgentWorkspace {
  const opened = AgentWorkspace.open(root, { scope: 'test', ...(scrub === undefined ? {} : { scrub }) });
  if (opened._tag === 'Left') throw new Error(opened.left.message);
  return opened.right;
}

function testKey(): ReceiptKey {
  const key = ReceiptKey.fromBytes(new Uint8Array(32).fill(9));
  if (key._tag === 'Left') throw new Error('receipt key');
  return key.right;
}

export interface GateRecord {
  readonly request: ToolCallRequest;
  readonly execution: ToolExecution | null;
}

export class TestGate implements ToolGate {
  readonly records: GateRecord[] = [];
  readonly steering: string[] = [];
  readonly usages: ModelUsage[] = [];
  readonly spawned: string[] = [];
  decide: (request: ToolCallRequest) => 'allow' | 'deny' | 'stop' = () => 'allow';
  stopAfterTurns = Number.POSITIVE_INFINITY;
  allowSubagents = true;
  /** Delay before executing, so concurrent calls overlap measurably. */
  delayMs = 0;
  inFlight = 0;
  maxInFlight = 0;
  readonly #issuer = new ReceiptIssuer(testKey());
  #seq = 0;

  async call(request: ToolCallRequest): Promise<ToolCallOutcome> {
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
      const decision = this.decide(request);
      if (decision === 'deny') {
        this.records.push({ request, execution: null });
        return { kind: 'denied', reason: 'supervised profile: deny by test policy' };
      }
      if (decision === 'stop') {
        this.records.push({ request, execution: null });
        return { kind: 'stopped', reason: 'budget exhausted: toolCalls' };
      }
      const execution = await request.execute(new AbortController().signal);
      this.records.push({ request, execution });
      this.#seq += 1;
      const output = this.#issuer.issue({
        taskId: makeId('TaskId', 'test'),
        toolCallId: makeId('ToolCallId', `c${this.#seq}`),
        toolName: request.tool,
        args: request.args,
        result: execution.text,
        modelText: execution.text,
        eventSeq: this.#seq,
      });
      return { kind: 'result', output };
    } finally {
      this.inFlight -= 1;
    }
  }

  async modelTurn(usage: ModelUsage): Promise<{ stop: boolean; reason: string | null }> {
    this.usages.push(usage);
    return this.usages.length >= this.stopAfterTurns
      ? { stop: true, reason: 'budget exhausted: turns' }
      : { stop: false, reason: null };
  }

  /** Steering is accepted while the test has not stopped the task (`decide` says 'stop'). */
  async steered(text: string): Promise<{ accepted: boolean }> {
    this.steering.push(text);
    return { accepted: true };
  }

  async spawnSubagent(role: string): Promise<{ allowed: boolean; reason: string | null; subagentId: string }> {
    this.spawned.push(role);
    return this.allowSubagents
      ? { allowed: true, reason: null, subagentId: `sa-${this.spawned.length}` }
      : { allowed: false, reason: 'subagent budget (0) spent', subagentId: `sa-${this.spawned.length}` };
  }
}

/** A provider that plays scripted turns and keeps every request it was sent. */
export class ScriptedProvider implements ModelProvider {
  readonly id = 'scripted';
  readonly requests: ModelRequest[] = [];
  readonly #inner: ReplayProvider;

  constructor(turns: readonly ScriptedTurn[]) {
    this.#inner = new ReplayProvider(scriptedTrajectory(turns));
  }

  stream(request: ModelRequest, signal?: AbortSignal): AsyncIterable<StreamEvent> {
    this.requests.push(request);
    return this.#inner.stream(request, signal);
  }
}

/** Tool messages in the last request a provider received. */
export function lastToolMessages(
  provider: ScriptedProvider,
): { toolName: string; content: string; isError?: boolean }[] {
  const last = provider.requests.at(-1);
  return (last?.messages ?? []).filter((m) => m.role === 'tool') as never;
}
