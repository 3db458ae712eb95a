/**
 * The one place that starts processes. Every child runs detached in its own
 * process group, with exactly the environment it is given, its output always
 * drained into bounded captures, and a timeout and an abort signal that kill
 * the whole group (SIGTERM, then SIGKILL after a short grace).
 *
 * Expected failures (program missing, cwd missing, bad spec) come back as a
 * `ProcessResult` whose `startError` is set; this module never throws for them.
 */
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { findHostTool } from '../mount/host-layout.js';
import { type CapturedStream, StreamCapture } from './captured-stream.js';
import { LAUNCHER_FAILURE_EXIT, LAUNCHER_FAILURE_MARKER, launcherArgv } from './descriptor-launcher.js';
import { inheritableDescriptors } from './inherited-descriptors.js';
import { resolveProgram } from './resolve-program.js';

/** A process to run: argv (never a shell string), cwd, and bounds. */
export interface ProcessSpec {
  /** Program and arguments. `argv[0]` is resolved against `env.PATH` when not absolute. */
  readonly argv: readonly [string, ...string[]];
  /** Absolute working directory; must exist. */
  readonly cwd: string;
  /** Exactly this environment; nothing is inherited from `process.env`. */
  readonly env: Readonly<Record<string, string>>;
  /** Bytes for stdin; when absent stdin is closed at once (the child reads EOF). */
  readonly stdin?: string | Uint8Array;
  /** Wall-clock limit; the whole process group is killed when it passes. */
  readonly timeoutMs: number;
  /** Byte budget per stream; head and tail are kept, the middle dropped and marked. */
  readonly maxOutputBytes: number;
  /** Aborting kills the whole process group; `cancelled` is then true. */
  readonly signal?: AbortSignal;
  /** Told what the run does while it runs (a client waiting on a long run can show it). */
  readonly observer?: RunObserver;
}

/**
 * Live events of one run, as they happen: the child was spawned (under a
 * sandbox: the sandbox started; a program the launcher then cannot exec still
 * ends with a startError), and output arrived (a running total per stream,
 * dropped bytes included). Observers must not throw; they cannot change the run.
 */
export interface RunObserver {
  readonly started?: () => void;
  readonly output?: (stream: 'stdout' | 'stderr', totalBytes: number) => void;
}

/** Why a process could not be started. */
export type ProcessStartFailure =
  /** `argv[0]` was not found (ENOENT). */
  | 'NotFound'
  /** `argv[0]` exists but is not executable (EACCES). */
  | 'PermissionDenied'
  /** `cwd` does not exist or is not a directory. */
  | 'CwdNotFound'
  /** The spec itself is malformed (relative cwd, NUL bytes, bad bounds, …). */
  | 'InvalidSpec'
  /** The OS refused for another reason (EAGAIN, ENOMEM, …). */
  | 'SpawnFailed';

/** A process that never started. Carried in `ProcessResult.startError`. */
export interface ProcessStartError {
  readonly _tag: 'ProcessStartError';
  readonly reason: ProcessStartFailure;
  /** The errno code when the OS reported one (`'ENOENT'`), else null. */
  readonly code: string | null;
  readonly message: string;
}

/**
 * How a run ended. A run that never started has `startError` set, `exitCode`
 * and `signal` null and empty streams, so `exitCode === 0` is never true for it.
 */
export interface ProcessResult {
  /** Exit status, or null when killed by a signal or never started. */
  readonly exitCode: number | null;
  /** Name of the terminating signal (`'SIGKILL'`), or null. */
  readonly signal: string | null;
  /** The wall-clock limit passed and the group was killed. */
  readonly timedOut: boolean;
  /** The abort signal fired (before or during the run) and the group was killed. */
  readonly cancelled: boolean;
  readonly stdout: CapturedStream;
  readonly stderr: CapturedStream;
  readonly durationMs: number;
  /** Set when the process was never started; null otherwise. */
  readonly startError: ProcessStartError | null;
}

/** Time between SIGTERM and SIGKILL when a run is stopped. */
export const KILL_GRACE_MS = 500;
/** After the main process exits, how long leftover pipe holders may keep stdout/stderr open. */
export const DRAIN_AFTER_EXIT_MS = 2_000;
const MAX_TIMEOUT_MS = 24 * 60 * 60 * 1_000;
const MAX_OUTPUT_BYTES = 1 << 30;
const MAX_ARGV_ITEMS = 100_000;

/** Extra behaviour the sandbox backends add around a run. Internal to this package. */
export interface RunHooks {
  /**
   * Kills everything the run started. Defaults to signalling the child's
   * process group. Backends with a pid namespace or cgroup add their own.
   */
  readonly killTree?: (pid: number, signal: NodeJS.Signals) => void;
  /** Called once after the child exited and its streams closed (cleanup); awaited before resolving. */
  readonly afterExit?: (pid: number) => void | Promise<void>;
  /**
   * Bytes the program reads from descriptor 3 until EOF (bubblewrap's
   * `--seccomp 3`). The one descriptor above 2 a child ever gets.
   */
  readonly descriptor3Input?: Uint8Array;
}

/** A stream no program wrote: what a run that never started, or failed before exec, reports. */
export const emptyCapture = (): CapturedStream => new StreamCapture(0).finish();

function startFailed(
  reason: ProcessStartFailure,
  code: string | null,
  message: string,
  cancelled = false,
): ProcessResult {
  return {
    exitCode: null,
    signal: null,
    timedOut: false,
    cancelled,
    stdout: emptyCapture(),
    stderr: emptyCapture(),
    durationMs: 0,
    startError: { _tag: 'ProcessStartError', reason, code, message },
  };
}

const hasNul = (s: string): boolean => s.includes('\u0000');

/** Checks a spec's shape; returns a message for the first problem or null. */
export function checkProcessSpec(spec: ProcessSpec): string | null {
  if (!Array.isArray(spec.argv) || spec.argv.length === 0) return 'argv must be a non-empty array';
  if (spec.argv.length > MAX_ARGV_ITEMS) return `argv has more than ${MAX_ARGV_ITEMS} items`;
  for (const arg of spec.argv) {
    if (typeof arg !== 'string' || hasNul(arg)) return 'argv items must be strings without NUL';
  }
  if (spec.argv[0] === '') return 'argv[0] must not be empty';
  if (typeof spec.cwd !== 'string' || !isAbsolute(spec.cwd) || hasNul(spec.cwd)) return 'cwd must be an absolute path';
  for (const [name, value] of Object.entries(spec.env)) {
    if (name === '' || name.includes('=') || hasNul(name))
      return `bad environment variable name ${JSON.stringify(name)}`;
    if (typeof value !== 'string' || hasNul(value)) return `environment variable ${name} must be a string without NUL`;
  }
  if (!Number.isFinite(spec.timeoutMs) || spec.timeoutMs <= 0 || spec.timeoutMs > MAX_TIMEOUT_MS) {
    return `timeoutMs must be in (0, ${MAX_TIMEOUT_MS}]`;
  }
  if (!Number.isSafeInteger(spec.maxOutputBytes) || spec.maxOutputBytes < 0 || spec.maxOutputBytes > MAX_OUTPUT_BYTES) {
    return `maxOutputBytes must be an integer in [0, ${MAX_OUTPUT_BYTES}]`;
  }
  return null;
}

/** Signals a whole process group; a group that is already gone is not an error. */
export function signalProcessGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone, which is what we wanted.
  }
}

function reasonFor(code: string | null): ProcessStartFailure {
  if (code === 'ENOENT') return 'NotFound';
  if (code === 'EACCES' || code === 'EPERM') return 'PermissionDenied';
  return 'SpawnFailed';
}

function errnoCode(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : null;
}

/**
 * What to spawn: the resolved program itself when this process has no descriptor an exec would
 * hand on (`direct`), else the launcher's argv wrapped around it.
 */
interface Launch {
  readonly file: string;
  readonly args: string[];
  readonly argv0: string | undefined;
  readonly carriesInput: boolean;
  readonly direct: boolean;
}

/** Checks the spec and its directory and resolves the program to a path; a start failure otherwise. */
export function resolveLaunchProgram(spec: ProcessSpec): string | ProcessResult {
  const problem = checkProcessSpec(spec);
  if (problem !== null) return startFailed('InvalidSpec', null, problem);
  if (spec.signal?.aborted === true) return startFailed('SpawnFailed', null, 'cancelled before start', true);
  try {
    if (!statSync(spec.cwd).isDirectory()) {
      return startFailed('CwdNotFound', 'ENOTDIR', `cwd is not a directory: ${spec.cwd}`);
    }
  } catch (error) {
    return startFailed('CwdNotFound', errnoCode(error), `cwd does not exist: ${spec.cwd}`);
  }
  const program = spec.argv[0];
  const found = resolveProgram(program, spec.env.PATH, spec.cwd);
  if (found._tag === 'Missing') {
    return startFailed(reasonFor(found.code), found.code, `cannot start ${program}: ${found.code}`);
  }
  return found.path;
}

/** Checks the spec, resolves the program and builds the launcher argv; a start failure otherwise. */
function prepareLaunch(spec: ProcessSpec, hooks: RunHooks): Launch | ProcessResult {
  const program = resolveLaunchProgram(spec);
  if (typeof program !== 'string') return program;
  const carriesInput = hooks.descriptor3Input !== undefined;
  if (inheritableDescriptors()?.length === 0) {
    return { file: program, args: spec.argv.slice(1), argv0: spec.argv[0], carriesInput, direct: true };
  }
  const perl = findHostTool('perl');
  if (perl === null) {
    return startFailed(
      'SpawnFailed',
      null,
      'perl is needed to close inherited descriptors before a child runs: apt-get install -y perl-base',
    );
  }
  const launch = launcherArgv(perl, carriesInput, program, spec.argv);
  if ('problem' in launch) return startFailed('SpawnFailed', null, launch.problem);
  const [file, ...args] = launch.argv;
  return { file, args, argv0: undefined, carriesInput, direct: false };
}

/**
 * The child's descriptors. Direct: stdio on 0-2, the handed-on input on 3. Through the launcher:
 * fd 2 is /dev/null and the real stderr is on 3 (the launcher moves it back), the input on 4.
 */
function stdioFor(launch: Launch): ('pipe' | 'ignore')[] {
  const input = launch.carriesInput ? (['pipe'] as const) : [];
  return launch.direct ? ['pipe', 'pipe', 'pipe', ...input] : ['pipe', 'pipe', 'ignore', 'pipe', ...input];
}

/** A run the launcher refused before the program started (its marker line on stderr, exit 125). */
function launcherFailure(result: ProcessResult): ProcessResult {
  if (
    result.exitCode !== LAUNCHER_FAILURE_EXIT ||
    result.stdout.totalBytes > 0 ||
    !result.stderr.text.startsWith(LAUNCHER_FAILURE_MARKER)
  ) {
    return result;
  }
  const message = result.stderr.text.trim();
  return { ...result, startError: { _tag: 'ProcessStartError', reason: 'SpawnFailed', code: null, message } };
}

/**
 * Runs `spec` and resolves with how it ended. Never rejects for an expected
 * failure. Internal form with backend hooks; the public entry points are
 * `runTrustedHostCommand` and `runSandboxed`.
 *
 * When this process holds a descriptor an exec would hand on, the child is
 * the descriptor-closing launcher (see descriptor-launcher.ts): its fd 2 is
 * /dev/null and the real stderr arrives on fd 3 until the launcher, inside
 * the child, moves it back and closes everything from 3 up. Otherwise the
 * program is spawned itself (inherited-descriptors.ts): exec closes the rest.
 */
export function runProcess(spec: ProcessSpec, hooks: RunHooks = {}): Promise<ProcessResult> {
  const launch = prepareLaunch(spec, hooks);
  if (!('file' in launch)) return Promise.resolve(launch);
  const program = spec.argv[0];
  const startedAt = performance.now();
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn(launch.file, launch.args, {
      cwd: spec.cwd,
      // A fresh object: node must see exactly these variables and nothing else.
      env: { ...spec.env },
      detached: true,
      stdio: stdioFor(launch),
      windowsHide: true,
      ...(launch.argv0 === undefined ? {} : { argv0: launch.argv0 }),
    });
  } catch (error) {
    const code = errnoCode(error);
    return Promise.resolve(startFailed(code === null ? 'InvalidSpec' : reasonFor(code), code, String(error)));
  }
  const childStderr = child.stdio[launch.direct ? 2 : 3] as Readable | null;
  const input = launch.carriesInput ? (child.stdio[launch.direct ? 3 : 4] as Writable | null) : null;
  if (input !== null) {
    input.on('error', () => {});
    // Once the bytes are handed over, our end goes: the reader sees EOF, and `close` need not wait for it.
    input.once('finish', () => input.destroy());
    input.end(hooks.descriptor3Input);
  }
  const supervised = superviseChild(child, childStderr, spec, hooks, program, startedAt);
  // Told only now, when the run's abort and timeout are armed: an observer that aborts as the run
  // starts (a person's stop at that moment) must find the abort handled, not lost.
  if (child.pid !== undefined) spec.observer?.started?.();
  // Only the launcher writes its marker: a program spawned directly that prints it is just a program.
  return launch.direct ? supervised : supervised.then(launcherFailure);
}

/** Captures both streams within the spec's budget, telling its observer each new total. */
function captureOutput(
  child: ReturnType<typeof spawn>,
  childStderr: Readable | null,
  spec: ProcessSpec,
): { readonly stdout: StreamCapture; readonly stderr: StreamCapture } {
  const stdout = new StreamCapture(spec.maxOutputBytes);
  const stderr = new StreamCapture(spec.maxOutputBytes);
  const observe = spec.observer;
  const totals = { stdout: 0, stderr: 0 };
  const take = (stream: 'stdout' | 'stderr', capture: StreamCapture) => (chunk: Buffer) => {
    capture.push(chunk);
    totals[stream] += chunk.length;
    observe?.output?.(stream, totals[stream]);
  };
  child.stdout?.on('data', take('stdout', stdout));
  childStderr?.on('data', take('stderr', stderr));
  return { stdout, stderr };
}

function superviseChild(
  child: ReturnType<typeof spawn>,
  childStderr: Readable | null,
  spec: ProcessSpec,
  hooks: RunHooks,
  program: string,
  startedAt: number,
): Promise<ProcessResult> {
  return new Promise<ProcessResult>((resolve) => {
    const pid = child.pid;
    if (pid === undefined) {
      child.once('error', (error) => {
        const code = errnoCode(error);
        resolve(startFailed(reasonFor(code), code, `cannot start ${program}: ${error.message}`));
      });
      return;
    }
    const killTree = hooks.killTree ?? signalProcessGroup;
    const { stdout, stderr } = captureOutput(child, childStderr, spec);
    // EPIPE when the child does not read its stdin is normal, not a failure.
    child.stdin?.on('error', () => {});
    child.stdout?.on('error', () => {});
    childStderr?.on('error', () => {});
    child.on('error', () => {});

    let timedOut = false;
    let cancelled = false;
    let exited = false;
    let exitCode: number | null = null;
    let exitSignal: string | null = null;
    let killTimer: NodeJS.Timeout | undefined;
    let drainTimer: NodeJS.Timeout | undefined;

    const stop = (): void => {
      if (exited || killTimer !== undefined) return;
      killTree(pid, 'SIGTERM');
      killTimer = setTimeout(() => killTree(pid, 'SIGKILL'), KILL_GRACE_MS);
    };
    const timeoutTimer = setTimeout(() => {
      timedOut = true;
      stop();
    }, spec.timeoutMs);
    const onAbort = (): void => {
      // An abort after the process already exited cancels nothing.
      if (exited) return;
      cancelled = true;
      stop();
    };
    spec.signal?.addEventListener('abort', onAbort, { once: true });

    child.once('exit', (code, signal) => {
      exited = true;
      exitCode = code;
      exitSignal = signal;
      clearTimeout(timeoutTimer);
      if (killTimer !== undefined) clearTimeout(killTimer);
      // Leftover members of the group (background jobs) are part of the run:
      // they die with it, and must not keep our pipes open.
      killTree(pid, 'SIGKILL');
      drainTimer = setTimeout(() => {
        child.stdout?.destroy();
        childStderr?.destroy();
      }, DRAIN_AFTER_EXIT_MS);
    });
    child.once('close', () => {
      if (drainTimer !== undefined) clearTimeout(drainTimer);
      spec.signal?.removeEventListener('abort', onAbort);
      const result: ProcessResult = {
        exitCode,
        signal: exitSignal,
        timedOut,
        cancelled,
        stdout: stdout.finish(),
        stderr: stderr.finish(),
        durationMs: performance.now() - startedAt,
        startError: null,
      };
      Promise.resolve()
        .then(() => hooks.afterExit?.(pid))
        // Cleanup trouble must not turn a finished run into a rejection.
        .catch(() => {})
        .then(() => resolve(result));
    });

    if (spec.stdin === undefined) child.stdin?.end();
    else child.stdin?.end(typeof spec.stdin === 'string' ? Buffer.from(spec.stdin, 'utf8') : spec.stdin);
  });
}
