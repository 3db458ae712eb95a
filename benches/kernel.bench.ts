/**
 * Kernel step and policy check latency (issue #2).
 * - kernel step: p50 per event on a mixed stream (target < 1 µs, aim 0.3 µs),
 *   against an empty loop that allocates the same action arrays.
 * - policy check: p50 (target < 20 µs, aim 2 µs) against a bare object lookup.
 */
import {
  type Action,
  createKernel,
  decide,
  type KernelEvent,
  makeId,
  type Operation,
  type PolicySnapshot,
  sha256Hex,
} from '@crustcore/kernel';
import { ratio, report, runCases } from './harness.js';

const TASKS = 200;
const patch = sha256Hex('patch');
const tree = sha256Hex('tree');
const receipt = sha256Hex('receipt');

/** A realistic mix: per task, creation, planning, model turns, tool calls, verify, approval, apply. */
function mixedStream(): KernelEvent[] {
  const events: KernelEvent[] = [];
  let seq = 0;
  let at = 1_700_000_000_000;
  const push = (e: Record<string, unknown>) => {
    seq += 1;
    at += 1;
    events.push({ seq, at, ...e } as unknown as KernelEvent);
  };
  for (let n = 0; n < TASKS; n++) {
    const taskId = makeId('TaskId', `b${n}`);
    push({ kind: 'TaskCreated', taskId, goal: 'fix it', profile: 'supervised', approvalMode: 'auto', canAsk: false });
    push({ kind: 'WorkspaceReady', taskId, baseCommit: 'abc' });
    push({ kind: 'TaskPlanned', taskId, summary: 'p' });
    for (let k = 0; k < 20; k++) {
      const toolCallId = makeId('ToolCallId', `b${n}x${k}`);
      push({ kind: 'ModelOutputReceived', taskId, inputTokens: 100, outputTokens: 20, costMicros: 3 });
      const operation: Operation =
        k % 2 === 0 ? { op: 'fs.read', path: 'src/a.ts' } : { op: 'fs.write', path: 'src/a.ts' };
      push({
        kind: 'ToolCallRequested',
        taskId,
        toolCallId,
        tool: 'edit',
        actor: 'agent',
        operation,
        approvalId: makeId('ApprovalId', `b${n}x${k}`),
        nonce: 'n',
      });
      push({ kind: 'ToolCallCompleted', taskId, toolCallId, ok: true, outputBytes: 200, receiptHash: receipt });
    }
    push({ kind: 'PatchProposed', taskId, patchHash: patch, selfClaimedDone: true, filesChanged: 1, risks: [] });
    push({
      kind: 'PatchVerified',
      taskId,
      patchHash: patch,
      treeHash: tree,
      baseCommit: 'abc',
      argv: ['npm', 'test'],
      profile: 'verify',
      exitCode: 0,
      stdoutHash: receipt,
      stderrHash: receipt,
      risks: [],
      approvalId: makeId('ApprovalId', `b${n}v`),
      nonce: 'nv',
    });
  }
  return events;
}

const events = mixedStream();
const actionCounts = (() => {
  const k = createKernel();
  return events.map((e) => k.step(e).length);
})();

let sink: unknown;
const rows = await runCases('kernel step (mixed stream)', [
  {
    name: `kernel.step × ${events.length}`,
    itemsPerCall: events.length,
    fn: () => {
      const kernel = createKernel();
      let acc: readonly Action[] = [];
      for (const e of events) acc = kernel.step(e);
      sink = acc;
    },
  },
  {
    name: `baseline: loop allocating the same action arrays × ${events.length}`,
    itemsPerCall: events.length,
    fn: () => {
      let acc: unknown[] = [];
      for (let i = 0; i < events.length; i++) {
        const n = actionCounts[i] ?? 0;
        acc = [];
        for (let j = 0; j < n; j++) acc.push({ kind: 'X', taskId: (events[i] as { taskId?: string }).taskId });
      }
      sink = acc;
    },
  },
]);
const [step, baseline] = rows;
if (step && baseline) {
  report('kernel step p50 per event', `${step.perItemP50Us.toFixed(3)} µs`, '< 1 µs (aim 0.3 µs)');
  report('kernel events/second', Math.round(step.itemsPerSecond).toLocaleString('en-US'));
  ratio('kernel step vs allocation-only loop', step, baseline);
}

const policy: PolicySnapshot = {
  profile: 'supervised',
  canAsk: true,
  rules: [
    { decision: 'deny', op: 'exec', match: 'curl' },
    { decision: 'allow', op: 'exec', match: 'make' },
    { decision: 'deny', op: 'fs.write', match: '.github' },
  ],
};
const ops: Operation[] = [
  { op: 'fs.write', path: 'src/index.ts' },
  { op: 'exec', argv: ['make', 'lint'], cwd: '.', profile: 'build', recognizedRunner: false },
  { op: 'exec', argv: ['curl', 'x'], cwd: '.', profile: 'build', recognizedRunner: false },
  { op: 'git.push', remote: 'origin', branch: 'main', force: true },
];
const table: Record<string, string> = { 'fs.write': 'allow', exec: 'ask', 'git.push': 'ask' };
const policyRows = await runCases('policy check', [
  {
    name: 'decide() × 4 ops',
    itemsPerCall: ops.length,
    fn: () => {
      for (const op of ops) sink = decide(policy, op, 'agent');
    },
  },
  {
    name: 'baseline: table lookup × 4 ops',
    itemsPerCall: ops.length,
    fn: () => {
      for (const op of ops) sink = { decision: table[op.op], reason: op.op };
    },
  },
]);
const [check, lookup] = policyRows;
if (check && lookup) {
  report('policy check p50', `${check.perItemP50Us.toFixed(3)} µs`, '< 20 µs (aim 2 µs)');
  ratio('policy check vs table lookup', check, lookup);
}
void sink;
