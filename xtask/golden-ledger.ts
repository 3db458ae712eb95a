/**
 * Generates the golden ledger under golden/ledger/v1/: a small, realistic
 * task story written through the real writer, receipt issuer, artifact store
 * and kernel. Every later version of CrustCore must still read and replay it
 * (golden/ledger.test.ts), so regenerate it only for a new format version
 * (into v2/, keeping v1/).
 *
 *   node --conditions=source --import tsx xtask/golden-ledger.ts [outDir]
 *
 * The MAC key is a fixed TEST key, committed next to the log as
 * `receipt.key`. It protects nothing; real installations create their own.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type Action,
  createKernel,
  decodeKernelEvent,
  type Hash32,
  type Json,
  type KernelEvent,
  makeId,
  sha256Hex,
  type TaskId,
} from '@crustcore/kernel';
import {
  ArtifactStore,
  inspectLog,
  kernelReplay,
  LedgerWriter,
  ReceiptIssuer,
  ReceiptKey,
  recordKernelStep,
  stateDirLayout,
  type ToolOutput,
} from '@crustcore/ledger';

/** A TEST key: hex of SHA-256("crustcore golden ledger test key — not a secret"). */
export const GOLDEN_KEY_HEX = sha256Hex('crustcore golden ledger test key — not a secret');
export const GOLDEN_START_MS = Date.UTC(2026, 10, 30, 9, 0, 0);

export function goldenKey(): ReceiptKey {
  const key = ReceiptKey.fromBytes(Buffer.from(GOLDEN_KEY_HEX, 'hex'));
  if (key._tag === 'Left') throw new Error('golden key');
  return key.right;
}

const must = <T>(result: { _tag: 'Left'; left: unknown } | { _tag: 'Right'; right: T }, what: string): T => {
  if (result._tag === 'Left') throw new Error(`${what}: ${JSON.stringify(result.left)}`);
  return result.right;
};

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

const SOURCE = `export function parseDuration(text: string): number {
  const match = /^(\\d+)m$/.exec(text);
  if (match === null) throw new Error(\`bad duration: \${text}\`);
  return Number(match[1]) * 60_000;
}
`;
const PATCH = `--- a/src/duration.ts
+++ b/src/duration.ts
@@ -1,5 +1,7 @@
 export function parseDuration(text: string): number {
-  const match = /^(\\d+)m$/.exec(text);
+  const match = /^(?:(\\d+)h)?(?:(\\d+)m)?$/.exec(text);
-  if (match === null) throw new Error(\`bad duration: \${text}\`);
-  return Number(match[1]) * 60_000;
+  if (match === null || text === '') throw new Error(\`bad duration: \${text}\`);
+  return Number(match[1] ?? 0) * 3_600_000 + Number(match[2] ?? 0) * 60_000;
 }
`;
const FAILING_RUN = `${Array.from({ length: 120 }, (_, i) => `  ✓ duration case ${i + 1}`).join('\n')}
  ✗ parseDuration("1h30m") → Error: bad duration: 1h30m
Tests: 1 failed, 120 passed
`;
const PASSING_RUN = `${Array.from({ length: 121 }, (_, i) => `  ✓ duration case ${i + 1}`).join('\n')}
Tests: 121 passed
`;

/** The runtime's side of the story: clock, kernel, ledger, receipts, artifacts. */
class StoryRuntime {
  readonly kernel = createKernel();
  readonly issuer: ReceiptIssuer;
  #clockMs = GOLDEN_START_MS;

  constructor(
    readonly writer: LedgerWriter,
    readonly store: ArtifactStore,
    key: ReceiptKey,
  ) {
    this.issuer = new ReceiptIssuer(key);
  }

  tick(ms: number): number {
    this.#clockMs += ms;
    return this.#clockMs;
  }

  /** Events are built as plain data and decoded like any adapter input would be. */
  async step(afterMs: number, build: (seq: number, at: number) => Record<string, unknown>): Promise<readonly Action[]> {
    const at = this.tick(afterMs);
    const event = (seq: number): KernelEvent => must(decodeKernelEvent(build(seq, at)), 'kernel event');
    return must(await recordKernelStep(this.writer, this.kernel, event), 'kernel step').actions;
  }

  async note(input: Omit<Parameters<LedgerWriter['append']>[0], 'timestampMs'>, afterMs = 10): Promise<void> {
    must(await this.writer.append({ ...input, timestampMs: this.tick(afterMs) }), 'append');
  }

  /** Runs a tool's bookkeeping: output (inline or artifact), receipt, model-visible output frame. */
  async toolResult(
    taskId: TaskId,
    toolCallId: ReturnType<typeof makeId<'ToolCallId'>>,
    tool: string,
    args: Json,
    result: Uint8Array,
  ): Promise<{ receiptHash: Hash32; output: ToolOutput }> {
    const output = must(await this.store.putOutput(result, 1024), 'artifact');
    const modelText =
      output._tag === 'Inline'
        ? output.text
        : `${output.head}\n…[${output.sizeBytes} bytes, artifact ${output.artifact}]…\n${output.tail}`;
    const receipted = must(
      await this.issuer.record(
        this.writer,
        {
          taskId,
          toolCallId,
          toolName: tool,
          args,
          result,
          modelText,
          artifactHashes: output._tag === 'Handle' ? [output.artifact] : [],
        },
        { timestampMs: this.tick(5) },
      ),
      'receipt',
    );
    await this.note({
      kind: 'tool.output',
      actor: 'tool',
      visibility: 'model-visible',
      taskId,
      payload: { toolCallId, receiptHash: receipted.receiptHash, output: output as unknown as Json },
    });
    return { receiptHash: receipted.receiptHash, output };
  }
}

function approvalFrom(actions: readonly Action[]): Extract<Action, { kind: 'RequestApproval' }> {
  const request = actions.find((a): a is Extract<Action, { kind: 'RequestApproval' }> => a.kind === 'RequestApproval');
  if (request === undefined) throw new Error(`expected RequestApproval, got ${JSON.stringify(actions)}`);
  return request;
}

/** Writes the golden story into a state directory (events.log, events.head, artifacts/). */
export async function writeGoldenStory(dir: string, key: ReceiptKey): Promise<void> {
  const layout = stateDirLayout(dir);
  const writer = must(
    await LedgerWriter.open({ ...layout, key, mode: 'batched', clockMs: () => GOLDEN_START_MS }),
    'open',
  );
  const rt = new StoryRuntime(writer, new ArtifactStore(layout.artifactsDir), key);
  const taskId = makeId('TaskId', 'golden1');
  const readCall = makeId('ToolCallId', 'read1');
  const execCall = makeId('ToolCallId', 'exec1');
  const baseCommit = sha256Hex('base commit').slice(0, 40);

  await rt.note(
    {
      kind: 'user.message',
      actor: 'user',
      visibility: 'user',
      payload: { text: 'Make parseDuration accept "1h30m".' },
    },
    0,
  );
  await rt.step(5, (seq, at) => ({
    kind: 'TaskCreated',
    seq,
    at,
    taskId,
    goal: 'Make parseDuration accept "1h30m" and keep the other duration tests passing',
    profile: 'supervised',
    approvalMode: 'ask',
    canAsk: true,
  }));
  await rt.step(400, (seq, at) => ({ kind: 'WorkspaceReady', seq, at, taskId, baseCommit }));
  await rt.note({
    kind: 'model.request',
    actor: 'runtime',
    visibility: 'internal',
    taskId,
    payload: { provider: 'mock', model: 'test-model', inputTokens: 812 },
  });
  await rt.step(1200, (seq, at) => ({
    kind: 'ModelOutputReceived',
    seq,
    at,
    taskId,
    inputTokens: 812,
    outputTokens: 164,
    costMicros: 2100,
  }));
  await rt.step(5, (seq, at) => ({
    kind: 'TaskPlanned',
    seq,
    at,
    taskId,
    summary: 'Read src/duration.ts, reproduce with the fixture script, widen the regex, verify with npm test.',
  }));

  // Tool call 1: a read (allowed by the supervised profile).
  await rt.step(300, (seq, at) => ({
    kind: 'ToolCallRequested',
    seq,
    at,
    taskId,
    toolCallId: readCall,
    tool: 'read_file',
    actor: 'agent',
    operation: { op: 'fs.read', path: 'src/duration.ts' },
    approvalId: makeId('ApprovalId', 'unused1'),
    nonce: 'n-read1',
  }));
  const read = await rt.toolResult(taskId, readCall, 'read_file', { path: 'src/duration.ts' }, utf8(SOURCE));
  await rt.step(5, (seq, at) => ({
    kind: 'ToolCallCompleted',
    seq,
    at,
    taskId,
    toolCallId: readCall,
    ok: true,
    outputBytes: utf8(SOURCE).length,
    receiptHash: read.receiptHash,
  }));

  // Tool call 2: an unrecognized command needs a person's approval first.
  const execOperation = {
    op: 'exec' as const,
    argv: ['node', 'scripts/check-durations.mjs'],
    cwd: '.',
    profile: 'bwrap',
    recognizedRunner: false,
  };
  const asked = await rt.step(900, (seq, at) => ({
    kind: 'ToolCallRequested',
    seq,
    at,
    taskId,
    toolCallId: execCall,
    tool: 'run_command',
    actor: 'agent',
    operation: execOperation,
    approvalId: makeId('ApprovalId', 'exec1'),
    nonce: 'n-exec1',
  }));
  const toolApproval = approvalFrom(asked);
  await rt.step(4000, (seq, at) => ({
    kind: 'ApprovalResolved',
    seq,
    at,
    taskId,
    approvalId: toolApproval.approvalId,
    decision: 'granted',
    by: 'human',
    nonce: toolApproval.nonce,
    opHash: toolApproval.opHash,
  }));
  const failing = await rt.toolResult(taskId, execCall, 'run_command', execOperation, utf8(FAILING_RUN));
  const failingArtifact = failing.output._tag === 'Handle' ? failing.output.artifact : undefined;
  await rt.step(1500, (seq, at) => ({
    kind: 'CommandCompleted',
    seq,
    at,
    taskId,
    argv: execOperation.argv,
    exitCode: 1,
    outputBytes: utf8(FAILING_RUN).length,
    durationMs: 1430,
    purpose: 'tool',
    toolCallId: execCall,
    ...(failingArtifact === undefined ? {} : { stdoutArtifact: failingArtifact }),
  }));
  await rt.step(5, (seq, at) => ({
    kind: 'ToolCallCompleted',
    seq,
    at,
    taskId,
    toolCallId: execCall,
    ok: true,
    outputBytes: utf8(FAILING_RUN).length,
    receiptHash: failing.receiptHash,
  }));

  // The patch, its verification in the sandbox, and the integration approval.
  const patch = must(await rt.store.put(utf8(PATCH)), 'patch artifact');
  await rt.note({
    kind: 'patch.stored',
    actor: 'runtime',
    visibility: 'internal',
    taskId,
    payload: { patchArtifact: patch.hash, filesChanged: 1 },
  });
  await rt.step(2000, (seq, at) => ({
    kind: 'PatchProposed',
    seq,
    at,
    taskId,
    patchHash: patch.hash,
    selfClaimedDone: true,
    filesChanged: 1,
    risks: [],
  }));
  const passing = must(await rt.store.put(utf8(PASSING_RUN)), 'verify log');
  await rt.step(6000, (seq, at) => ({
    kind: 'CommandCompleted',
    seq,
    at,
    taskId,
    argv: ['npm', 'test'],
    exitCode: 0,
    outputBytes: passing.sizeBytes,
    durationMs: 5870,
    purpose: 'verify',
    stdoutArtifact: passing.hash,
  }));
  const treeHash = sha256Hex(`tree after ${patch.hash}`);
  const integrate = approvalFrom(
    await rt.step(20, (seq, at) => ({
      kind: 'PatchVerified',
      seq,
      at,
      taskId,
      patchHash: patch.hash,
      treeHash,
      baseCommit,
      argv: ['npm', 'test'],
      profile: 'bwrap',
      exitCode: 0,
      stdoutHash: passing.hash,
      stderrHash: sha256Hex(''),
      risks: [],
      approvalId: makeId('ApprovalId', 'integrate1'),
      nonce: 'n-integrate1',
    })),
  );
  await rt.note({
    kind: 'secret.handle.used',
    actor: 'runtime',
    visibility: 'user',
    redaction: 'contains-handles',
    taskId,
    payload: { handle: 's_npmtoken', purpose: 'none: shown to test --redacted export' },
  });
  await rt.step(30_000, (seq, at) => ({
    kind: 'ApprovalResolved',
    seq,
    at,
    taskId,
    approvalId: integrate.approvalId,
    decision: 'granted',
    by: 'human',
    nonce: integrate.nonce,
    opHash: integrate.opHash,
  }));
  await rt.step(300, (seq, at) => ({
    kind: 'PatchApplied',
    seq,
    at,
    taskId,
    patchHash: patch.hash,
    journalId: 'journal-1',
  }));
  await writer.close();
}

/** What golden/ledger.test.ts compares against, derived from a fresh inspect. */
export function goldenExpectation(dir: string, key: ReceiptKey): Json {
  const report = inspectLog({ ...stateDirLayout(dir), key, kernel: kernelReplay(), replay: true });
  if (report.failure !== undefined)
    throw new Error(`golden log does not inspect clean: ${JSON.stringify(report.failure)}`);
  return {
    frames: report.chain.frames,
    lastSeq: report.chain.lastSeq,
    lastHash: report.chain.lastHash,
    receipts: report.receiptsChecked,
    artifacts: report.artifactsChecked,
    kernelEvents: report.kernelEventsChecked,
    replay: {
      events: report.replay?.events ?? 0,
      actions: report.replay?.actions ?? 0,
      finalStateHash: report.replay?.finalStateHash ?? '',
    },
    // Facts, not rendered lines: the story printer may improve, what happened may not change.
    tasks: report.tasks.map((story) => ({
      taskId: story.taskId,
      goal: story.goal ?? null,
      outcome: story.outcome,
      patchHash: story.patchHash ?? null,
      verification:
        story.verification === undefined
          ? null
          : {
              argv: [...story.verification.argv],
              exitCode: story.verification.exitCode,
              treeHash: story.verification.treeHash ?? null,
            },
      approvals: story.approvals.map((a) => ({
        approvalId: a.approvalId,
        decision: a.decision ?? null,
        by: a.by ?? null,
      })),
      commands: story.commands.map((c) => ({
        seq: c.seq,
        argv: [...c.argv],
        exitCode: c.exitCode,
        purpose: c.purpose ?? null,
      })),
      toolCalls: story.toolCalls,
      receipts: story.receipts,
    })),
  };
}

const README = `# Golden ledger, format v1

Written by \`xtask/golden-ledger.ts\` with the real writer, receipt issuer,
artifact store and kernel. \`golden/ledger.test.ts\` checks that the current
code still reads it, verifies every receipt and artifact, and replays it to
the same actions and state (\`expected.json\`). Never regenerate v1: a new
format version gets its own directory.

\`receipt.key\` is a fixed TEST key (SHA-256 of a public sentence). It is
committed on purpose, protects nothing, and must never be used by a real
installation (those create \`$CRUSTCORE_HOME/receipt.key\` with mode 0600).
Git does not keep the 0600 mode; the test copies the key to a private file.
`;

async function main(): Promise<void> {
  const out = resolve(
    process.argv[2] ?? join(fileURLToPath(new URL('.', import.meta.url)), '..', 'golden', 'ledger', 'v1'),
  );
  const key = goldenKey();
  const work = mkdtempSync(join(tmpdir(), 'golden-ledger-'));
  try {
    await writeGoldenStory(work, key);
    const expected = goldenExpectation(work, key);
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    cpSync(work, out, { recursive: true });
    rmSync(join(out, 'artifacts', 'tmp'), { recursive: true, force: true });
    writeFileSync(join(out, 'receipt.key'), `${GOLDEN_KEY_HEX}\n`, { mode: 0o600 });
    writeFileSync(join(out, 'expected.json'), `${JSON.stringify(expected, null, 2)}\n`);
    writeFileSync(join(out, 'README.md'), README);
    process.stdout.write(`golden ledger written to ${out}\n`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  });
}
