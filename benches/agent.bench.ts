/**
 * @crustcore/agent overheads (issue #9, the agent half).
 *
 * 1. Harness overhead per tool-call turn, excluding model and tool time: the
 *    model is an in-memory stream of prebuilt events and the gate answers at
 *    once with a receipted output, so what is measured is the loop itself
 *    (request building, event assembly, argument decoding, planning, context
 *    bookkeeping, micro-compaction). Baseline: a bare loop that streams the
 *    same events, collects the calls and calls the gate, with none of that.
 *    Target: p50 < 1 ms per turn.
 * 2. Resuming a 10,000-entry session (read, decode every line with io-ts,
 *    walk the tree, rebuild the model context) against readFileSync + split of
 *    the same file. Target: < 100 ms.
 */
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  AgentLoop,
  AgentWorkspace,
  ContextWindow,
  rebuildContext,
  SessionStore,
  TOOL_NAMES,
  type ToolCallOutcome,
  type ToolGate,
} from '@crustcore/agent';
import { makeId } from '@crustcore/kernel';
import { ReceiptIssuer, ReceiptKey } from '@crustcore/ledger';
import type { ModelProvider, ModelRequest, StreamEvent } from '@crustcore/net';
import { ratio, report, runCases } from './harness.js';

// ─── 1. harness overhead per tool-call turn ───────────────────────────────

const TURNS = 20;
const root = realpathSync(mkdtempSync(join(tmpdir(), 'agent-bench-')));
writeFileSync(join(root, 'a.js'), 'export const a = 1;\n');
const opened = AgentWorkspace.open(root, { scope: 'bench' });
if (opened._tag === 'Left') throw new Error(opened.left.message);
const workspace: AgentWorkspace = opened.right;

const key = ReceiptKey.fromBytes(new Uint8Array(32).fill(3));
if (key._tag === 'Left') throw new Error('key');
const output = new ReceiptIssuer(key.right).issue({
  taskId: makeId('TaskId', 'bench'),
  toolCallId: makeId('ToolCallId', 'bench'),
  toolName: 'read_file',
  args: { path: 'a.js' },
  result: 'a.js lines 1-1 of 1\n1\texport const a = 1;',
  modelText: 'a.js lines 1-1 of 1\n1\texport const a = 1;',
  eventSeq: 1,
});
const answered: ToolCallOutcome = { kind: 'result', output };
/** Answers at once: no kernel, no ledger, no tool run — those are not the harness. */
const instantGate: ToolGate = {
  call: async () => answered,
  modelTurn: async () => ({ stop: false, reason: null }),
  spawnSubagent: async () => ({ allowed: false, reason: 'bench', subagentId: 'x' }),
  steered: async () => ({ accepted: true }),
};

const usage: StreamEvent = {
  type: 'usage',
  inputTokens: 1000,
  outputTokens: 50,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  costMicroDollars: 0,
  priced: false,
};
const turnEvents = (index: number): StreamEvent[] => [
  { type: 'text_delta', text: 'Reading the file again.' },
  {
    type: 'tool_call',
    id: `call_${index}`,
    name: 'read_file',
    arguments: { path: 'a.js', startLine: 1 + (index % 3) },
  },
  usage,
  { type: 'done', stopReason: 'tool_use' },
];
const FINAL: StreamEvent[] = [{ type: 'text_delta', text: 'done' }, usage, { type: 'done', stopReason: 'end_turn' }];
const SCRIPT = [...Array.from({ length: TURNS }, (_, i) => turnEvents(i)), FINAL];

function instantProvider(): ModelProvider {
  let turn = 0;
  return {
    id: 'bench',
    stream(_request: ModelRequest) {
      const events = SCRIPT[turn++] ?? FINAL;
      return (async function* () {
        yield* events;
      })();
    },
  };
}

async function harnessRun(): Promise<void> {
  const loop = new AgentLoop(
    {
      model: 'm',
      system: 'system prompt',
      tools: TOOL_NAMES,
      actor: 'agent',
      maxTurns: TURNS + 2,
      maxResponseTokens: 1000,
      compactionThresholdTokens: 1_000_000,
    },
    { provider: instantProvider(), gate: instantGate, workspace, window: new ContextWindow() },
  );
  loop.addUserMessage('the task');
  const outcome = await loop.run();
  if (outcome.kind !== 'done' || outcome.toolCalls !== TURNS) throw new Error(`unexpected ${outcome.kind}`);
}

async function bareRun(): Promise<void> {
  const provider = instantProvider();
  const messages: unknown[] = [{ role: 'user', content: 'the task' }];
  for (;;) {
    const calls: { id: string; name: string; arguments: unknown }[] = [];
    for await (const event of provider.stream({ model: 'm', system: '', messages: [], tools: [], maxTokens: 1 })) {
      if (event.type === 'tool_call') calls.push(event);
    }
    if (calls.length === 0) return;
    for (const call of calls) {
      const result = await instantGate.call({
        tool: call.name,
        args: {},
        operation: { op: 'fs.read', path: 'a.js' },
        actor: 'agent',
        execute: async () => ({ text: '', ok: true, outputBytes: 0 }),
      });
      messages.push(result);
    }
  }
}

const turnRows = await runCases(
  `one tool-call turn (read_file), model and tool time excluded; ${TURNS} turns per run`,
  [
    { name: 'bare loop (stream, collect, gate)', fn: bareRun, itemsPerCall: TURNS },
    { name: 'agent harness (AgentLoop)', fn: harnessRun, itemsPerCall: TURNS },
  ],
  1_500,
);
ratio('harness vs bare loop, per turn', turnRows[1]!, turnRows[0]!, 'harness p50 < 1 ms per turn');
report('harness p50 per turn', `${(turnRows[1]!.perItemP50Us / 1000).toFixed(3)} ms`, '< 1 ms');

// ─── 2. resume a 10,000-entry session ─────────────────────────────────────

const ENTRIES = 10_000;
const sessionsDir = realpathSync(mkdtempSync(join(tmpdir(), 'agent-bench-sessions-')));
const store = new SessionStore(sessionsDir);
const session = store.create({ repoId: 'bench' });
session.append({ type: 'message', message: { role: 'user', content: 'fix the failing test in src/calc.js' } });
for (let index = 1; index < ENTRIES; index += 1) {
  const kind = index % 3;
  if (kind === 1) {
    session.append({
      type: 'message',
      message: {
        role: 'assistant',
        content: [
          { type: 'text', text: `Step ${index}: reading.` },
          { type: 'tool_call', id: `c${index}`, name: 'read_file', arguments: { path: `src/file${index % 50}.js` } },
        ],
      },
    });
  } else if (kind === 2) {
    session.append({
      type: 'message',
      message: {
        role: 'tool',
        toolCallId: `c${index - 1}`,
        toolName: 'read_file',
        content: `src/file${index % 50}.js lines 1-4 of 4\n1\texport function f${index}(a, b) {\n2\t  return a + b;\n3\t}\n`,
      },
      meta: { tool: 'read_file', reads: `src/file${index % 50}.js`, readOnly: true, wholeFile: true },
    });
  } else {
    session.append({
      type: 'custom',
      customType: 'worktree_snapshot',
      data: { commit: 'a'.repeat(40), tree: 'b'.repeat(40) },
    });
  }
}
session.close();
const bytes = readFileSync(session.path).length;
console.log(`\nsession file: ${ENTRIES} entries, ${(bytes / 1024 / 1024).toFixed(2)} MiB`);

const resumeRows = await runCases(
  `resume a ${ENTRIES.toLocaleString('en-US')}-entry session`,
  [
    {
      name: 'readFileSync + split (baseline)',
      fn: () => {
        const lines = readFileSync(session.path, 'utf8').split('\n');
        if (lines.length < ENTRIES) throw new Error('short');
      },
    },
    {
      name: 'SessionStore.open + pathTo + rebuildContext',
      fn: () => {
        const opened = store.open(session.id);
        if (opened._tag === 'Left') throw new Error(opened.left.message);
        const rebuilt = rebuildContext(opened.right.session.pathTo());
        if (rebuilt.messages.length < ENTRIES / 2) throw new Error('short');
      },
    },
  ],
  2_000,
);
ratio('resume vs readFileSync + split', resumeRows[1]!, resumeRows[0]!, 'resume < 100 ms');
report('resume p50', `${resumeRows[1]!.p50Ms.toFixed(1)} ms`, '< 100 ms');

// One cold resume, for the record (first call after a fresh start pays JIT warm-up).
const coldStarted = performance.now();
const cold = new SessionStore(sessionsDir).open(session.id);
if (cold._tag === 'Left') throw new Error('cold');
report('resume (one more, timed alone)', `${(performance.now() - coldStarted).toFixed(1)} ms`);

rmSync(root, { recursive: true, force: true });
rmSync(sessionsDir, { recursive: true, force: true });
