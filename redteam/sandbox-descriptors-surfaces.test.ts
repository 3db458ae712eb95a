/**
 * Inherited descriptors on every other surface that starts sandboxed
 * children (redteam/sandbox-descriptors.test.ts covers the runner's library
 * entry points and `crustcore run --worker`). The same python3 holder
 * (descriptor-harness.ts) plants directories, files, pipes, sockets, an
 * eventfd, an epoll and a memfd without O_CLOEXEC at numbers 3 … limit-1,
 * proves with its two CONTROLS that a plain fork+exec and bubblewrap started
 * directly both see and use them, and then execs the built CLI as:
 *
 * - `crustcore mcp`, started by the official SDK client over stdio as an IDE
 *   starts it (the holder is the server's process): the verify tool runs the
 *   person's `--verify` command, a probe, on a staged diff that carries the
 *   planted numbers; its report comes back in the answer's output tail;
 * - `crustcore daemon --json`, in the foreground (its log is the holder's
 *   stdout) and detached the way `crustcore daemon … &` from a shell that
 *   then exits leaves it (forked, new session, stdio on /dev/null and a log
 *   file); a queued task's worker runs the probe and the applied patch
 *   carries the report back;
 * - the native agent: `crustcore run --backend native --replay` (a recorded
 *   trajectory whose `run_command` runs the probe in the build sandbox) and
 *   `crustcore chat` against a scripted model on 127.0.0.1 whose tool call
 *   runs it (the person approves the call and the apply on stdin).
 *
 * Besides what the probe saw, the test looks at the running CrustCore
 * process itself — when idle, while a sandbox it started is held open by a
 * handshake (a file the sandboxed run writes, a file the test then writes),
 * and mid-task — in /proc/<pid>/fdinfo: no descriptor from 3 up may lack
 * O_CLOEXEC (nothing planted survives, nothing it opened itself would reach
 * a child), and no process below it may hold a planted descriptor.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registryFor, startModelServer } from '../golden/agent/model-server.js';
import { buildCli, CLI, makeRepo, type Sandbox } from '../golden/cli-harness.js';
import { cli } from '../golden/daemon-harness.js';
import { listTree } from '../golden/honest-harness.js';
import {
  descendantsOf,
  expectControlsLeak,
  expectNoneReached,
  HOLDER,
  type HolderReport,
  holderReport,
  inheritableOf,
  PROBE,
  parseProbe,
  plantedHeldBy,
  shellQuote,
} from './descriptor-harness.js';

const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'crustcore-redteam-fd-surfaces-')));
const SECRET = `host-secret-surfaces-${process.pid}`;
const secretFile = join(scratch, 'secret.txt');
const victimFile = join(scratch, 'victim.txt');
const probeFile = join(scratch, 'probe.py');
const holderFile = join(scratch, 'holder.py');
writeFileSync(secretFile, SECRET);
writeFileSync(victimFile, 'untouched');
writeFileSync(probeFile, PROBE);
writeFileSync(holderFile, HOLDER);

/** Processes this file started that outlive a failed test (the detached daemon): stopped at the end. */
const started = new Set<number>();
const boxes: Sandbox[] = [];
afterAll(() => {
  for (const pid of started) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  for (const box of boxes) rmSync(box.root, { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
});

beforeAll(() => buildCli(), 300_000);

/** A repository whose `npm test` passes, with the probe committed. */
function probeRepo(extra: Readonly<Record<string, string>> = {}): Sandbox {
  const box = makeRepo({
    'package.json': '{ "name": "fds", "private": true, "type": "module", "scripts": { "test": "node --test" } }\n',
    'test/ok.test.js': "import { test } from 'node:test';\ntest('ok', () => {});\n",
    'probe.py': PROBE,
    ...extra,
  });
  boxes.push(box);
  return box;
}

const pause = (ms: number): Promise<void> => new Promise((resume) => setTimeout(resume, ms));

/**
 * Resolves with `check()`'s first non-null value: a handshake on a file, a log line or a
 * process's output. `gone()` returning a reason fails it at once (the process it waits on
 * ended); `boundMs` only bounds a failure.
 */
async function until<T>(what: string, check: () => T | null, gone: () => string | null, boundMs = 240_000): Promise<T> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const value = check();
    if (value !== null) return value;
    const reason = gone();
    if (reason !== null) throw new Error(`${what}: ${reason}`);
    if (Date.now() > deadline) throw new Error(`${what}: not within ${boundMs} ms`);
    await pause(50);
  }
}

/** Writes the holder's driver: a shell script that ends by exec'ing the CLI. */
function driver(name: string, lines: readonly string[]): string {
  const path = join(scratch, `${name}.sh`);
  writeFileSync(path, ['#!/bin/sh', ...lines, ''].join('\n'));
  chmodSync(path, 0o755);
  return path;
}

const cliExec = (args: readonly string[]): string =>
  `exec ${shellQuote(process.execPath)} ${shellQuote(CLI)} ${args.map(shellQuote).join(' ')}`;

const holderArgv = (driverFile: string): string[] => [holderFile, probeFile, secretFile, victimFile, driverFile];

const envFor = (box: Sandbox, extra: Readonly<Record<string, string>> = {}): Record<string, string> => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: box.root,
  CRUSTCORE_HOME: box.home,
  NO_COLOR: '1',
  ...extra,
});

/** The holder (then the CLI it execs) as a child of this test, its output collected. */
class LiveHolder {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  status: number | null | undefined = undefined;
  readonly exited: Promise<number | null>;

  constructor(driverFile: string, env: Record<string, string>) {
    this.child = spawn('/usr/bin/python3', holderArgv(driverFile), { cwd: scratch, env, stdio: 'pipe' });
    if (this.child.pid !== undefined) started.add(this.child.pid);
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk;
    });
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolve) =>
      this.child.once('close', (code) => {
        this.status = code;
        if (this.child.pid !== undefined) started.delete(this.child.pid);
        resolve(code);
      }),
    );
  }

  get pid(): number {
    return this.child.pid as number;
  }

  /** Why a wait on it can stop now: it ended. */
  gone = (): string | null =>
    this.status === undefined
      ? null
      : `exited ${this.status}\nstdout:\n${this.stdout.slice(-3000)}\nstderr:\n${this.stderr.slice(-3000)}`;
}

/** The holder's report file, once it was renamed into place (before the exec). */
const reportFrom = (path: string, gone: () => string | null): Promise<HolderReport> =>
  until(
    'the holder report',
    () => (existsSync(path) ? holderReport(readFileSync(path, 'utf8').split('\n')) : null),
    gone,
  );

/** The process really is the CLI the holder exec'd (same pid, new program). */
function expectIsCli(pid: number, command: string): void {
  const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  expect(argv.slice(0, 3)).toEqual([process.execPath, CLI, command]);
}

/**
 * Nothing from 3 up is inheritable in `pid`, and nothing planted is held by any process below it.
 * (The CLI itself may still hold some planted descriptors, close-on-exec: Node marks the unbroken
 * run of open descriptors from 3 up close-on-exec as it starts, and closeInheritedDescriptors
 * closes only what an exec would hand on. No exec hands those on, and no bubblewrap sandbox sees
 * this process's /proc entries.)
 */
function expectClean(pid: number, report: HolderReport, when: string): number[] {
  expect(inheritableOf(pid), `${when}: descriptors of the CLI an exec would hand on`).toEqual([]);
  const below = descendantsOf(pid);
  expect(plantedHeldBy(below, report), `${when}: planted descriptors held below the CLI`).toEqual([]);
  return below;
}

/** A file named `name` under the home's worktrees (where every sandboxed run of a task works). */
const holdFile = (home: string, name: string): string | null =>
  [join(home, 'pool'), join(home, 'worktrees')]
    .flatMap((dir) => listTree(dir))
    .find((path) => path.endsWith(`/${name}`)) ?? null;

/**
 * The MCP server's `--verify`: the probe in a child (it passes on whatever the sandbox got),
 * then, for the staged patch (it carries planted.txt), a hold until the test writes `go`, then a
 * one-line verdict (the answer shows only the output's last 4 KiB) and exit 1 (only a failed
 * verification answers with its output).
 */
const FDPROBE = `
import json, os, re, subprocess, sys, time
held = os.path.exists('planted.txt')
numbers = open('planted.txt').read().strip() if held else '3'
run = subprocess.run([sys.executable, 'probe.py', numbers], close_fds=False, capture_output=True, text=True)
line = next((l for l in run.stdout.splitlines() if l.startswith('PROBE ')), None)
report = json.loads(line[len('PROBE '):]) if line else {'open': None, 'tries': {}}
reached = sorted('%s:%s' % (n, what) for n, tries in report['tries'].items()
                 for what, outcome in tries.items() if not re.match(r'errno(9|2)$', outcome))
if held:
    with open('fd-hold-' + sys.argv[1], 'w') as f:
        f.write('held')
    while not os.path.exists('go'):
        time.sleep(0.05)
print('FDVERDICT ' + json.dumps({'numbers': numbers, 'open': report['open'], 'reached': reached,
                                 'stderr': run.stderr[-300:]}))
sys.exit(1)
`;

/** A diff creating planted.txt with `text` as its one line. */
const newFileDiff = (text: string): string =>
  `diff --git a/planted.txt b/planted.txt\nnew file mode 100644\n--- /dev/null\n+++ b/planted.txt\n@@ -0,0 +1 @@\n+${text}\n`;

async function mcpCall(client: Client, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 240_000 });
  const text = ((result.content ?? []) as { text?: string }[]).map((part) => part.text ?? '').join('');
  if (result.isError === true) throw new Error(`${name}: ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

interface LogLine {
  readonly event: string;
  readonly [key: string]: unknown;
}

/** A running daemon as the test sees it: its pid, its JSON log so far, whether it ended. */
interface DaemonView {
  readonly pid: number;
  log(): string;
  gone(): string | null;
  /** SIGTERM, then the exit: null when it stopped cleanly, else what went wrong. */
  stop(): Promise<string | null>;
}

const logLines = (text: string): LogLine[] =>
  text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as LogLine];
      } catch {
        return [];
      }
    });

const logEvent = (daemon: DaemonView, test: (line: LogLine) => boolean, what: string): Promise<LogLine> =>
  until(what, () => logLines(daemon.log()).find(test) ?? null, daemon.gone);

const daemonArgs = ['daemon', '--json', '--poll-ms', '200', '--lease-ms', '120000'];

/** `crustcore daemon` exec'd by the holder in the foreground: its log is the holder's stdout. */
function foregroundDaemon(box: Sandbox, reportPath: string): DaemonView {
  const holder = new LiveHolder(
    driver('daemon-foreground', [cliExec(daemonArgs)]),
    envFor(box, { CRUSTCORE_HOLDER_REPORT: reportPath }),
  );
  return {
    pid: holder.pid,
    log: () => holder.stdout,
    gone: holder.gone,
    stop: async () => {
      holder.child.kill('SIGTERM');
      const code = await holder.exited;
      return code === 0 ? null : `the daemon exited ${code}: ${holder.stderr.slice(-2000)}`;
    },
  };
}

/** /proc/PID/stat after the command name: state, ppid, process group, session, …; null once gone. */
function statOf(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

const alive = (pid: number): boolean => {
  const state = statOf(pid)?.[0];
  return state !== undefined && state !== 'Z';
};

/**
 * `crustcore daemon` left running by a holder that exits, as `crustcore daemon … &` from a
 * shell that then exits leaves it: forked, in a session of its own, its log a file.
 */
async function detachedDaemon(box: Sandbox, reportPath: string): Promise<DaemonView> {
  const logPath = join(scratch, 'daemon-detached.log');
  const holder = new LiveHolder(
    driver('daemon-detached', [cliExec(daemonArgs)]),
    envFor(box, { CRUSTCORE_HOLDER_REPORT: reportPath, CRUSTCORE_HOLDER_DETACH: logPath }),
  );
  expect(await holder.exited, holder.stderr).toBe(0);
  const read = (): string => (existsSync(logPath) ? readFileSync(logPath, 'utf8') : '');
  const ready = await until(
    'the detached daemon to start',
    () => logLines(read()).find((line) => line.event === 'daemon.ready') ?? null,
    () => null,
  );
  const pid = Number(ready.pid);
  started.add(pid);
  const stat = statOf(pid) ?? [];
  // Its own session (setsid), and no longer the holder's child: the holder is gone.
  expect(Number(stat[3])).toBe(pid);
  expect(Number(stat[1])).not.toBe(holder.pid);
  const view: DaemonView = {
    pid,
    log: read,
    gone: () => (alive(pid) ? null : `the detached daemon ${pid} is gone; log:\n${read().slice(-3000)}`),
    stop: async () => {
      if (alive(pid)) process.kill(pid, 'SIGTERM');
      await until(
        'the detached daemon to exit',
        () => (alive(pid) ? null : true),
        () => null,
      );
      started.delete(pid);
      return logLines(read()).some((line) => line.event === 'daemon.stopped')
        ? null
        : `the detached daemon ended without daemon.stopped: ${read().slice(-2000)}`;
    },
  };
  return view;
}

/**
 * The daemon attack: a queued task whose worker writes the probe's report, then holds its
 * sandbox open until the test, having looked at the daemon and everything below it, writes `go`.
 */
async function attackDaemon(daemon: DaemonView, box: Sandbox, reportPath: string, marker: string): Promise<void> {
  const ready = await logEvent(daemon, (line) => line.event === 'daemon.ready', 'the daemon to start');
  expect(ready.pid).toBe(daemon.pid);
  expectIsCli(daemon.pid, 'daemon');
  const report = await reportFrom(reportPath, daemon.gone);
  expectControlsLeak(report, SECRET);
  expectClean(daemon.pid, report, 'daemon, idle');
  const hold = `fd-hold-${marker}`;
  const worker = `sh -c ${shellQuote(probeScript(report.numbers.join(','), hold))}`;
  const added = cli(envFor(box), [
    'tasks',
    'add',
    '--dir',
    box.repo,
    '--goal',
    'probe',
    '--worker',
    worker,
    '--approve',
    'auto',
    '--json',
  ]);
  expect(added.status, added.stderr + added.stdout).toBe(0);
  const jobId = String(added.json?.jobId);
  const held = await until('the worker to hold', () => holdFile(box.home, hold), daemon.gone);
  const below = expectClean(daemon.pid, report, 'daemon, while its worker sandbox runs');
  expect(below.length, 'the worker sandbox is running below the daemon').toBeGreaterThan(0);
  writeFileSync(join(dirname(held), 'go'), 'go');
  const finished = await logEvent(
    daemon,
    (line) => line.event === 'job.finished' && line.jobId === jobId,
    `job ${jobId}`,
  );
  expect(finished).toMatchObject({ status: 'Completed', outcome: 'completed' });
  const probed = parseProbe(readFileSync(join(box.repo, 'fd-report.txt'), 'utf8'));
  expectNoneReached(probed, report.numbers, `daemon worker (${marker})`);
  expectClean(daemon.pid, report, 'daemon, after the job');
}

/** One recorded model turn of the native agent's trajectory format. */
const recordedTurn = (events: readonly Record<string, unknown>[], stopReason: string): Record<string, unknown> => ({
  model: 'crustcore-redteam-recording',
  events: [
    ...events,
    {
      type: 'usage',
      inputTokens: 100,
      outputTokens: 10,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      costMicroDollars: 0,
      priced: false,
    },
    { type: 'done', stopReason },
  ],
});

/**
 * The probe in a shell, its report in the worktree (the patch carries it back). With `hold`, the
 * run then writes that file and keeps its sandbox open until the test writes `go` beside it.
 */
const probeScript = (numbers: string, hold: string | null = null): string =>
  `python3 probe.py ${numbers} > fd-report.txt` +
  (hold === null ? '' : ` && echo held > ${hold} && while [ ! -e go ]; do sleep 0.05; done; rm -f go ${hold}`);

/** The probe as the model's tool call: the build sandbox runs it. */
const probeCommand = (numbers: string, hold: string | null = null): string[] => [
  'sh',
  '-c',
  probeScript(numbers, hold),
];

const REPLAY_HOLD = `fd-hold-replay-${process.pid}`;

/** The recorded trajectory; the driver puts the planted numbers in for @PLANTED@ before the run. */
const TRAJECTORY = JSON.stringify({
  version: 1,
  turns: [
    recordedTurn(
      [
        { type: 'text_delta', text: 'Running the probe.' },
        {
          type: 'tool_call',
          id: 'call_1',
          name: 'run_command',
          arguments: { argv: probeCommand('@PLANTED@', REPLAY_HOLD) },
        },
      ],
      'tool_use',
    ),
    recordedTurn([{ type: 'text_delta', text: 'The probe wrote its report.' }], 'end_turn'),
  ],
});

const lastJson = (text: string): Record<string, unknown> =>
  JSON.parse(
    text
      .trim()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .pop() ?? '{}',
  ) as Record<string, unknown>;

describe('redteam: inherited descriptors reach no sandbox on the other surfaces', () => {
  it('`crustcore mcp` (started over stdio by the SDK client): its verify run sees none; the server holds none', async () => {
    const marker = `mcp-${process.pid}`;
    const box = probeRepo({ 'fdprobe.py': FDPROBE });
    const reportPath = join(scratch, 'mcp.report');
    const serve = driver('mcp', [cliExec(['mcp', '--dir', box.repo, '--verify', `python3 fdprobe.py ${marker}`])]);
    const transport = new StdioClientTransport({
      command: '/usr/bin/python3',
      args: holderArgv(serve),
      env: envFor(box, { CRUSTCORE_HOLDER_REPORT: reportPath }),
      cwd: scratch,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const client = new Client({ name: 'crustcore-redteam', version: '1.0.0' });
    let closed: string | null = null;
    transport.onclose = () => {
      closed = `the server exited\n${stderr.slice(-3000)}`;
    };
    await client.connect(transport, { timeout: 120_000 });
    try {
      const pid = transport.pid as number;
      expectIsCli(pid, 'mcp');
      const report = await reportFrom(reportPath, () => closed);
      expectControlsLeak(report, SECRET);
      expectClean(pid, report, 'mcp server, after the handshake');

      const created = await mcpCall(client, 'create_task', { goal: 'probe the descriptors' });
      const taskId = String(created.task_id);
      await mcpCall(client, 'stage_diff', { task_id: taskId, diff: newFileDiff(report.numbers.join(',')) });
      const verifying = mcpCall(client, 'verify', { task_id: taskId });
      let answered = false;
      void verifying
        .finally(() => {
          answered = true;
        })
        .catch(() => undefined);
      const hold = await until(
        'the verify run to hold',
        () => holdFile(box.home, `fd-hold-${marker}`),
        () => closed ?? (answered ? `verify answered first\n${stderr.slice(-3000)}` : null),
      );
      // The sandbox is running, held by the handshake: the server and everything below it.
      const below = expectClean(pid, report, 'mcp server, while its verify sandbox runs');
      expect(below.length, 'the verify sandbox is running below the server').toBeGreaterThan(0);
      writeFileSync(join(dirname(hold), 'go'), 'go');
      const verified = await verifying;
      expect(verified, stderr).toMatchObject({ passed: false });
      const verdict = /^FDVERDICT (.*)$/m.exec(String(verified.output_tail))?.[1];
      expect(verdict, JSON.stringify(verified)).toBeDefined();
      expect(JSON.parse(verdict as string)).toEqual({
        numbers: report.numbers.join(','),
        open: [],
        reached: [],
        stderr: '',
      });
      expectClean(pid, report, 'mcp server, after verify');
    } finally {
      await client.close();
    }
  }, 300_000);

  it('`crustcore daemon` started by the holder: its worker sees none; the daemon holds none', async () => {
    const box = probeRepo();
    const reportPath = join(scratch, 'daemon-foreground.report');
    const daemon = foregroundDaemon(box, reportPath);
    let stopped: string | null = 'never stopped';
    try {
      await attackDaemon(daemon, box, reportPath, `foreground-${process.pid}`);
    } finally {
      stopped = await daemon.stop();
    }
    expect(stopped).toBeNull();
  }, 300_000);

  it('`crustcore daemon` left detached (own session, log file, the holder gone): its worker sees none', async () => {
    const box = probeRepo();
    const reportPath = join(scratch, 'daemon-detached.report');
    const daemon = await detachedDaemon(box, reportPath);
    let stopped: string | null = 'never stopped';
    try {
      await attackDaemon(daemon, box, reportPath, `detached-${process.pid}`);
    } finally {
      stopped = await daemon.stop();
    }
    expect(stopped).toBeNull();
  }, 300_000);

  it("`crustcore run --backend native --replay`: the recorded run_command's build sandbox sees none", async () => {
    const box = probeRepo();
    const template = join(scratch, 'trajectory.template.json');
    const trajectory = join(scratch, 'trajectory.json');
    writeFileSync(template, TRAJECTORY);
    const run = new LiveHolder(
      driver('native-run', [
        `cd ${shellQuote(box.repo)} || exit 1`,
        `sed "s/@PLANTED@/$CRUSTCORE_PLANTED/g" ${shellQuote(template)} > ${shellQuote(trajectory)} || exit 1`,
        cliExec([
          'run',
          '--goal',
          'probe',
          '--backend',
          'native',
          '--replay',
          trajectory,
          '--profile',
          'full',
          '--approve',
          'auto',
          '--json',
        ]),
      ]),
      envFor(box),
    );
    const held = await until('the recorded run_command to hold', () => holdFile(box.home, REPLAY_HOLD), run.gone);
    // The holder printed its report before the exec; the run is mid-task, its build sandbox held open.
    const report = holderReport(run.stdout.split('\n'));
    expectControlsLeak(report, SECRET);
    expectIsCli(run.pid, 'run');
    const below = expectClean(run.pid, report, 'run, while the build sandbox runs');
    expect(below.length, 'the build sandbox is running below the CLI').toBeGreaterThan(0);
    writeFileSync(join(dirname(held), 'go'), 'go');
    expect(await run.exited, run.stdout + run.stderr).toBe(0);
    expect(lastJson(run.stdout), run.stdout + run.stderr).toMatchObject({ outcome: 'completed' });
    const probed = parseProbe(readFileSync(join(box.repo, 'fd-report.txt'), 'utf8'));
    expectNoneReached(probed, report.numbers, 'native agent run_command (replay)');
  }, 300_000);

  it('`crustcore chat` against a model on 127.0.0.1: the approved run_command sees none; chat holds none mid-task', async () => {
    const box = probeRepo();
    const reportPath = join(scratch, 'chat.report');
    let numbers = '';
    let pid = 0;
    let report: HolderReport | null = null;
    let midTask: { inheritable: string[]; held: string[] } | null = null;
    const server = await startModelServer((_request, index) => {
      if (index === 0)
        return {
          text: 'Running the probe.',
          calls: [{ name: 'run_command', arguments: { argv: probeCommand(numbers) } }],
        };
      if (index === 1 && report !== null) {
        // The tool ran and chat waits for the model, mid-task: the ledger and the worktree are open.
        midTask = { inheritable: inheritableOf(pid), held: plantedHeldBy(descendantsOf(pid), report) };
      }
      return { text: 'The probe wrote its report.' };
    });
    const registry = join(scratch, 'models.json');
    writeFileSync(registry, registryFor(server));
    const chat = new LiveHolder(
      driver('chat', [
        `cd ${shellQuote(box.repo)} || exit 1`,
        cliExec([
          'chat',
          '--dir',
          box.repo,
          '--models-config',
          registry,
          '--verify',
          'node --test',
          '--approve',
          'ask',
          '--apply',
        ]),
      ]),
      envFor(box, { CRUSTCORE_HOLDER_REPORT: reportPath }),
    );
    try {
      pid = chat.pid;
      report = await reportFrom(reportPath, chat.gone);
      expectControlsLeak(report, SECRET);
      numbers = report.numbers.join(',');
      await until('the chat prompt', () => (chat.stdout.includes('› ') ? true : null), chat.gone);
      expectIsCli(pid, 'chat');
      expectClean(pid, report, 'chat, idle');
      chat.child.stdin?.write('run the descriptor probe\n');
      // The person approves what is asked (the build-sandbox command, then the apply) until the report is applied.
      let answered = 0;
      await until(
        'the probe report to be applied',
        () => {
          for (; answered < chat.stdout.split('Approve?').length - 1; answered++) chat.child.stdin?.write('yes\n');
          return existsSync(join(box.repo, 'fd-report.txt')) ? true : null;
        },
        chat.gone,
      );
      chat.child.stdin?.end();
      expect(await chat.exited, chat.stdout + chat.stderr).toBe(0);
      expect(answered, chat.stdout).toBe(2);
      expect(midTask).toEqual({ inheritable: [], held: [] });
      const probed = parseProbe(readFileSync(join(box.repo, 'fd-report.txt'), 'utf8'));
      expectNoneReached(probed, report.numbers, 'chat run_command');
      expect(server.requests.length).toBeGreaterThanOrEqual(2);
    } finally {
      chat.child.kill('SIGKILL');
      await server.close();
    }
  }, 300_000);
});
