/**
 * Long verifications over real stdio (the built `crustcore mcp`, the official
 * SDK client, real bubblewrap), with no timing window anywhere:
 *
 * - progress: the repository's test waits for a file `go` in its own
 *   worktree, which this test writes only after the first
 *   notifications/progress arrived — so progress provably arrives while
 *   verify is still running; the notes name the sandboxed runs as they start
 *   and finish.
 * - cancellation: the test writes its pid and waits forever; the client
 *   cancels the request (notifications/cancelled); the processes that wrote
 *   those pids are gone, the task ends with TaskCancelled in the ledger, and
 *   the user's tree is untouched. CONTROL: before the cancel the same
 *   processes are alive (the kill is the server's doing, not the script's).
 * - two repositories in two sessions verify at the same time (both sandboxes
 *   are running before either is let go).
 * - two sessions on one repository (default state): both start and work
 *   (each holds its own slot of the project's state); while one verifies, the
 *   other's verify is `busy` (the ledger is held), never interleaved — the
 *   ledger replays clean.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { JSONRPCMessage, Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, CLI_ESM, makeRepo, NODE_REPO, REPO_ROOT, type Sandbox } from './cli-harness.js';
import { baseEnv, tempDir } from './daemon-harness.js';
import { listTree, processesWith } from './honest-harness.js';
import { eventKindsFor, framesOf, inspectReplay } from './mcp-harness.js';

const FIX =
  '--- a/src/math.js\n+++ b/src/math.js\n@@ -1,3 +1,3 @@\n export function add(a, b) {\n-  return a - b;\n+  return a + b;\n }\n';

/**
 * The repository's test: writes `hold-<pid>.json` (its pid and the marker it
 * was started with) in its working directory, then waits for `go` there.
 * It polls for the file because it runs inside the sandbox; the test's own
 * assertions never depend on how long anything takes.
 */
const HOLD_SCRIPT = `import { existsSync, writeFileSync } from 'node:fs';
writeFileSync('hold-' + process.pid + '.json', JSON.stringify({ pid: process.pid, marker: process.argv[2] }));
console.log('holding until go appears');
const look = () => { if (existsSync('go')) { console.log('# pass 1'); process.exit(0); } else setTimeout(look, 25); };
look();
`;

const home = tempDir('crustcore-mcp-progress-');
const env = baseEnv(home);
const boxes: Sandbox[] = [];
const clients: Client[] = [];
/** Every message each client's transport received, in wire order (see `session`). */
const wires = new Map<Client, JSONRPCMessage[]>();

beforeAll(() => buildCli(), 300_000);
afterAll(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => undefined);
  rmSync(home, { recursive: true, force: true });
  for (const box of boxes.splice(0)) rmSync(box.root, { recursive: true, force: true });
});

function holdRepo(): Sandbox {
  const box = makeRepo({ ...NODE_REPO, 'hold.mjs': HOLD_SCRIPT });
  boxes.push(box);
  return box;
}

async function session(repo: string, marker: string, extra: readonly string[] = ['--ephemeral']): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI_ESM, 'mcp', '--dir', repo, '--verify', `node hold.mjs ${marker}`, ...extra],
    env: env as Record<string, string>,
    cwd: REPO_ROOT,
    stderr: 'pipe',
  });
  transport.stderr?.on('data', () => undefined);
  const client = new Client({ name: 'crustcore-golden', version: '1.0.0' });
  await client.connect(transport, { timeout: 300_000 });
  // The SDK client answers a response at once but hands a notification to its handler one
  // microtask later, so a progress note read in the same chunk as the answer reaches onprogress
  // after the request is forgotten and is dropped. What the server promised is the order on the
  // wire: record it before the SDK sees each message.
  const wire: JSONRPCMessage[] = [];
  const deliver = transport.onmessage;
  transport.onmessage = (message) => {
    wire.push(message);
    deliver?.(message);
  };
  wires.set(client, wire);
  clients.push(client);
  return client;
}

type ProgressParams = Progress & { readonly progressToken: string | number };

/** The params of a notifications/progress message; null for every other message. */
function progressParams(message: JSONRPCMessage): ProgressParams | null {
  if (!('method' in message) || message.method !== 'notifications/progress') return null;
  return message.params as ProgressParams;
}

/**
 * The progress notes the server wrote for the one request that asked for progress, in wire
 * order up to its answer, and how many it wrote after the answer (a client drops those).
 */
function progressOnWire(client: Client): { readonly before: Progress[]; readonly afterAnswer: number } {
  const wire = wires.get(client) ?? [];
  const tokens = new Set(wire.flatMap((m) => progressParams(m)?.progressToken ?? []));
  expect(tokens.size, 'one request asked for progress').toBe(1);
  const [token] = tokens;
  const answer = wire.findIndex((m) => !('method' in m) && 'id' in m && m.id === token);
  expect(answer, 'the request was answered').toBeGreaterThanOrEqual(0);
  const notesIn = (messages: JSONRPCMessage[]): Progress[] =>
    messages.flatMap((m) => {
      const params = progressParams(m);
      if (params === null) return [];
      const { progressToken: _token, ...note } = params;
      return [note];
    });
  return { before: notesIn(wire.slice(0, answer)), afterAnswer: notesIn(wire.slice(answer)).length };
}

const textOf = (result: unknown): string =>
  (((result as { content?: unknown }).content ?? []) as { text?: string }[]).map((p) => p.text ?? '').join('');

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 600_000 });
  if (result.isError === true) throw new Error(`${name}: ${textOf(result)}`);
  return JSON.parse(textOf(result)) as Record<string, unknown>;
}

/** A task with the fix staged; its baseline run starts holding at create_task. */
async function stagedTask(client: Client): Promise<string> {
  const created = await call(client, 'create_task', { goal: 'fix add' });
  const taskId = String(created.task_id);
  await call(client, 'stage_diff', { task_id: taskId, diff: FIX });
  return taskId;
}

interface Hold {
  readonly file: string;
  readonly pid: number;
}

/**
 * The hold files written so far by runs started with `marker`, in any worktree under
 * $CRUSTCORE_HOME. Only the worktree directories are walked: the state plane's PGlite
 * cluster beside them is thousands of files, and walking it every 50 ms cost more CPU
 * than the verifications being watched.
 */
function holdsOf(marker: string): Hold[] {
  return [join(home, 'pool'), join(home, 'worktrees')]
    .flatMap((dir) => listTree(dir))
    .filter((path) => /\/hold-\d+\.json$/.test(path))
    .flatMap((file) => {
      try {
        const hold = JSON.parse(readFileSync(file, 'utf8')) as { pid: number; marker: string };
        return hold.marker === marker ? [{ file, pid: hold.pid }] : [];
      } catch {
        return [];
      }
    });
}

const pause = (ms: number): Promise<void> => new Promise((resume) => setTimeout(resume, ms));

/** Resolves when `count` runs with `marker` are holding (a handshake on files; only the test timeout bounds it). */
async function holding(marker: string, count: number): Promise<Hold[]> {
  for (let found = holdsOf(marker); ; found = holdsOf(marker)) {
    if (found.length >= count) return found;
    await pause(50);
  }
}

/** Lets every run with `marker` finish (now and later) until `done` settles. */
async function release(marker: string, done: Promise<unknown>): Promise<void> {
  let settled = false;
  void done.finally(() => {
    settled = true;
  });
  while (!settled) {
    for (const hold of holdsOf(marker)) {
      const go = join(dirname(hold.file), 'go');
      if (existsSync(dirname(hold.file)) && !existsSync(go)) writeFileSync(go, 'go');
    }
    await pause(50);
  }
}

/** Host pids of live processes started with `marker` whose namespace pid is one a hold file names. */
function liveHolders(marker: string, holds: readonly Hold[]): number[] {
  const written = new Set(holds.map((h) => h.pid));
  return processesWith(marker).filter((pid) => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const nspids = /NSpid:\s+([\d\s]+)/.exec(status)?.[1]?.trim().split(/\s+/).map(Number) ?? [];
      const state = /State:\s+(\S)/.exec(status)?.[1];
      return state !== 'Z' && written.has(nspids[nspids.length - 1] ?? -1);
    } catch {
      return false;
    }
  });
}

/** The project ledger (under $CRUSTCORE_HOME/projects) that holds `taskId`. */
function ledgerWith(taskId: string): string {
  const projects = join(home, 'projects');
  const name = readdirSync(projects).find((dir) => eventKindsFor(framesOf(join(projects, dir)), taskId).length > 0);
  if (name === undefined) throw new Error(`no ledger holds ${taskId}`);
  return join(projects, name);
}

describe('crustcore mcp: progress and cancellation during verify', () => {
  it('sends notifications/progress while verify runs, before it answers', async () => {
    const box = holdRepo();
    const marker = `crustcore-progress-${process.pid}-a`;
    const client = await session(box.repo, marker);
    const taskId = await stagedTask(client);
    const notes: Progress[] = [];
    let firstNote: () => void = () => undefined;
    const heard = new Promise<void>((resolve) => {
      firstNote = resolve;
    });
    let answered = false;
    const verifying = client
      .callTool({ name: 'verify', arguments: { task_id: taskId } }, undefined, {
        timeout: 600_000,
        resetTimeoutOnProgress: true,
        onprogress: (note) => {
          notes.push(note);
          firstNote();
        },
      })
      .finally(() => {
        answered = true;
      });
    await heard;
    // The test is still holding: verify cannot have answered yet.
    expect(answered).toBe(false);
    const notesBeforeGo = notes.length;
    expect(notesBeforeGo).toBeGreaterThanOrEqual(1);
    await release(marker, verifying);
    const result = await verifying;
    expect(result.isError, textOf(result)).not.toBe(true);
    expect(JSON.parse(textOf(result))).toMatchObject({ passed: true, phase: 'APPROVAL_GATE' });
    const onWire = progressOnWire(client);
    expect(onWire.afterAnswer).toBe(0);
    // What onprogress heard is what the wire carried, less any notes the SDK dropped (see `session`).
    expect(onWire.before.slice(0, notes.length)).toEqual(notes);
    const messages = onWire.before.map((n) => String(n.message));
    expect(messages[0]).toMatch(/verify accepted/);
    expect(messages).toContainEqual(expect.stringMatching(/^verify run started in the sandbox: node hold\.mjs/));
    expect(messages).toContainEqual(expect.stringMatching(/^verify run finished: exit 0, \d+ bytes of output/));
    expect(messages).toContainEqual(expect.stringMatching(/^baseline run finished: exit 0/));
    const finished = messages.findIndex((m) => /^verify run finished/.test(m));
    expect(
      messages.findIndex((m) => /^verification passed/.test(m)),
      messages.join('\n'),
    ).toBeGreaterThan(finished);
    // Progress only grows (the spec's rule).
    const values = onWire.before.map((n) => n.progress);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(new Set(values).size).toBe(values.length);
  }, 600_000);

  it('cancelling verify kills its sandbox and ends the task; the tree is untouched', async () => {
    const box = holdRepo();
    const marker = `crustcore-cancel-${process.pid}-b`;
    const client = await session(box.repo, marker);
    const taskId = await stagedTask(client);
    const abort = new AbortController();
    const started = new Promise<void>((resolve) => {
      void client
        .callTool({ name: 'verify', arguments: { task_id: taskId } }, undefined, {
          timeout: 600_000,
          signal: abort.signal,
          onprogress: (note) => {
            if (/^verify run started/.test(String(note.message))) resolve();
          },
        })
        .catch(() => undefined);
    });
    await started;
    // The baseline (from create_task) and the verify run are both holding.
    const holds = await holding(marker, 2);
    // CONTROL: the processes that wrote those pids are alive right now.
    expect(liveHolders(marker, holds).length).toBeGreaterThanOrEqual(2);
    abort.abort('the person stopped it');
    // They go (the process table is the handshake).
    while (liveHolders(marker, holds).length > 0) await pause(50);
    expect(liveHolders(marker, holds)).toEqual([]);
    // The kernel hears it: TaskCancelled, and the task is over.
    const ledger = ledgerWith(taskId);
    while (!eventKindsFor(framesOf(ledger), taskId).includes('TaskCancelled')) await pause(50);
    // The task row follows the ledger: cancellation is a notification with no reply, so the
    // state plane's phase is the handshake. Until it moves, it may only still say VERIFY.
    let status = await call(client, 'status', { task_id: taskId });
    while (status.phase === 'VERIFY') {
      await pause(50);
      status = await call(client, 'status', { task_id: taskId });
    }
    expect(status.phase).toBe('ABORTED');
    expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toBe(NODE_REPO['src/math.js']);
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: box.repo, encoding: 'utf8' })).toBe('');
    expect(inspectReplay(env, ledger).status).toBe(0);
  }, 600_000);
});

describe('crustcore mcp: sessions at once', () => {
  it('two repositories in two sessions verify at the same time', async () => {
    const [a, b] = [holdRepo(), holdRepo()];
    const [markerA, markerB] = [`crustcore-two-${process.pid}-a`, `crustcore-two-${process.pid}-b`];
    const [first, second] = await Promise.all([session(a.repo, markerA), session(b.repo, markerB)]);
    const [taskA, taskB] = await Promise.all([stagedTask(first), stagedTask(second)]);
    const verifyA = first.callTool({ name: 'verify', arguments: { task_id: taskA } }, undefined, { timeout: 600_000 });
    const verifyB = second.callTool({ name: 'verify', arguments: { task_id: taskB } }, undefined, { timeout: 600_000 });
    // Both verifications are running at once (baseline + verify in each) before either is let go.
    await Promise.all([holding(markerA, 2), holding(markerB, 2)]);
    const both = Promise.all([verifyA, verifyB]);
    await Promise.all([release(markerA, both), release(markerB, both)]);
    for (const result of await both) {
      expect(result.isError, textOf(result)).not.toBe(true);
      expect(JSON.parse(textOf(result))).toMatchObject({ passed: true });
    }
  }, 600_000);

  it('two sessions on one repository: both work; a verify while the other holds the ledger is busy', async () => {
    const box = holdRepo();
    const marker = `crustcore-same-${process.pid}`;
    // Default state: each server claims its own slot of the project's state (no --state-dir).
    const first = await session(box.repo, marker, []);
    const second = await session(box.repo, marker, []);
    const taskA = await stagedTask(first);
    const taskB = await stagedTask(second);
    const verifyA = first.callTool({ name: 'verify', arguments: { task_id: taskA } }, undefined, {
      timeout: 600_000,
    });
    // A's verify run holds (so A holds the ledger): two baselines + A's verify run.
    await holding(marker, 3);
    const busy = await second.callTool({ name: 'verify', arguments: { task_id: taskB } });
    expect(busy.isError).toBe(true);
    expect(textOf(busy)).toMatch(/^busy: /);
    await release(marker, verifyA);
    expect(JSON.parse(textOf(await verifyA))).toMatchObject({ passed: true });
    // Free again: B verifies now.
    const verifyB = second.callTool({ name: 'verify', arguments: { task_id: taskB } }, undefined, {
      timeout: 600_000,
    });
    await release(marker, verifyB);
    expect(JSON.parse(textOf(await verifyB))).toMatchObject({ passed: true });
    // One ledger, both tasks, never interleaved: it replays clean.
    const ledger = ledgerWith(taskA);
    expect(ledgerWith(taskB)).toBe(ledger);
    const frames = framesOf(ledger);
    expect(eventKindsFor(frames, taskA)).toContain('PatchVerified');
    expect(eventKindsFor(frames, taskB)).toContain('PatchVerified');
    expect(inspectReplay(env, ledger).status).toBe(0);
    // Two slots of the project's state, one per server.
    // (The other tests' servers, one per repository, each hold a first slot of their own.)
    const slots = readdirSync(join(home, 'mcp', 'projects'));
    const secondSlots = slots.filter((name) => name.endsWith('~2'));
    expect(secondSlots).toHaveLength(1);
    // CONTROL: a third server forced into the first server's slot cannot use its database, and says why.
    const firstSlot = join(home, 'mcp', 'projects', (secondSlots[0] as string).slice(0, -'~2'.length));
    expect(slots).toContain((secondSlots[0] as string).slice(0, -'~2'.length));
    const forced = await session(box.repo, marker, ['--state-dir', firstSlot]);
    const refused = await forced.callTool({ name: 'create_task', arguments: { goal: 'third' } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^busy: .*in use by pid \d+/);
  }, 600_000);
});
