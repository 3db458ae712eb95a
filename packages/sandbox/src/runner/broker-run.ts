/**
 * One run through the spawn broker, from request to result: the broker's reports (started,
 * exited, failed before exec) and the child's stream connections arrive in any order; the result
 * is ready once the child was reaped and both of its output streams ended, or the drain time after
 * its exit passed (as for a directly spawned child whose descendants hold the pipes; here also a
 * child that died before it connected a stream).
 */

import type { Socket } from 'node:net';
import { constants } from 'node:os';
import { StreamCapture } from './captured-stream.js';
import {
  DRAIN_AFTER_EXIT_MS,
  emptyCapture,
  KILL_GRACE_MS,
  type ProcessResult,
  type ProcessSpec,
  type ProcessStartError,
  type ProcessStartFailure,
  signalProcessGroup,
} from './process-runner.js';

const signalName = (number: number): string =>
  Object.entries(constants.signals).find(([, value]) => value === number)?.[0] ?? `signal ${number}`;

export class BrokerRun {
  readonly result: Promise<ProcessResult>;
  readonly #spec: ProcessSpec;
  readonly #done: () => void;
  readonly #startedAt = performance.now();
  readonly #captures: Readonly<Record<'1' | '2', StreamCapture>>;
  readonly #totals = { stdout: 0, stderr: 0 };
  readonly #sockets = new Map<string, Socket>();
  #resolve: (result: ProcessResult) => void = () => {};
  #openOutputs = 2;
  #pid: number | null = null;
  #exit: { readonly code: number | null; readonly signal: string | null } | null = null;
  #startError: ProcessStartError | null = null;
  #timedOut = false;
  #cancelled = false;
  #stopWhenStarted = false;
  /** The child connected its streams and went on to exec (its C report). */
  #execing = false;
  #settled = false;
  readonly #timers: NodeJS.Timeout[] = [];
  readonly #onAbort = (): void => {
    if (this.#exit !== null) return; // an abort after the exit cancels nothing
    this.#cancelled = true;
    this.#stop();
  };

  constructor(spec: ProcessSpec, done: () => void) {
    this.#spec = spec;
    this.#done = done;
    this.#captures = { '1': new StreamCapture(spec.maxOutputBytes), '2': new StreamCapture(spec.maxOutputBytes) };
    this.result = new Promise((resolve) => {
      this.#resolve = resolve;
    });
    this.#timers.push(
      setTimeout(() => {
        this.#timedOut = true;
        this.#stop();
      }, spec.timeoutMs),
    );
    spec.signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** A child's connection for stream 0, 1 or 2; false when it is not one this run expects. */
  attach(stream: string, socket: Socket, rest: Buffer): boolean {
    const expected = stream === '1' || stream === '2' || (stream === '0' && this.#spec.stdin !== undefined);
    if (!expected || this.#sockets.has(stream) || this.#settled) return false;
    this.#sockets.set(stream, socket);
    if (stream === '0') {
      const input = this.#spec.stdin ?? '';
      socket.end(typeof input === 'string' ? Buffer.from(input, 'utf8') : input);
      return true;
    }
    const name = stream === '1' ? 'stdout' : 'stderr';
    const take = (chunk: Buffer): void => {
      this.#captures[stream].push(chunk);
      this.#totals[name] += chunk.length;
      this.#spec.observer?.output?.(name, this.#totals[name]);
    };
    if (rest.length > 0) take(rest);
    socket.on('data', take);
    socket.once('close', () => {
      this.#openOutputs -= 1;
      this.#finishIfDone();
    });
    return true;
  }

  started(pid: number): void {
    this.#pid = pid;
    this.#spec.observer?.started?.();
    if (this.#stopWhenStarted) this.#stop();
  }

  execing(): void {
    this.#execing = true;
  }

  exited(code: number | null, signal: number | null): void {
    this.#exit = { code, signal: signal === null ? null : signalName(signal) };
    this.#clearTimers();
    // Leftover members of the group (background jobs) are part of the run: they die with it.
    if (this.#pid !== null) signalProcessGroup(this.#pid, 'SIGKILL');
    // Failed before exec, or died before it (killed as it started): no program ran, no output can come.
    if (this.#startError !== null || !this.#execing) {
      this.#finish();
      return;
    }
    // After the drain the run ends whatever its streams did: a child killed between fork and its
    // connects (an abort or timeout right at the start, the OOM killer) never opens them, and a run
    // waiting for their close would never settle (nor would its caller, nor the task).
    this.#timers.push(setTimeout(() => this.#finish(), DRAIN_AFTER_EXIT_MS));
    this.#finishIfDone();
  }

  failedBeforeExec(reason: ProcessStartFailure, code: string | null, stage: string): void {
    const what = stage === 'cwd' ? `cannot enter ${this.#spec.cwd}` : `cannot start ${this.#spec.argv[0]}`;
    this.#startError = { _tag: 'ProcessStartError', reason, code, message: `${what}: ${code ?? 'failed'}` };
  }

  neverStarted(reason: ProcessStartFailure, code: string | null, message: string): void {
    this.#startError = { _tag: 'ProcessStartError', reason, code, message };
    this.#finish();
  }

  /** The broker died: a child it started is killed, and the run fails as one that could not be run. */
  brokerLost(why: string): void {
    if (this.#pid !== null && this.#exit === null) signalProcessGroup(this.#pid, 'SIGKILL');
    this.neverStarted('SpawnFailed', null, why);
  }

  #stop(): void {
    if (this.#exit !== null || this.#settled) return;
    const pid = this.#pid;
    if (pid === null) {
      this.#stopWhenStarted = true;
      return;
    }
    signalProcessGroup(pid, 'SIGTERM');
    this.#timers.push(setTimeout(() => signalProcessGroup(pid, 'SIGKILL'), KILL_GRACE_MS));
  }

  #closeOutputs(): void {
    for (const socket of this.#sockets.values()) socket.destroy();
  }

  #clearTimers(): void {
    for (const timer of this.#timers.splice(0)) clearTimeout(timer);
  }

  #finishIfDone(): void {
    if (this.#exit !== null && this.#openOutputs === 0) this.#finish();
  }

  #finish(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#clearTimers();
    this.#closeOutputs();
    this.#spec.signal?.removeEventListener('abort', this.#onAbort);
    this.#done();
    const failed = this.#startError;
    this.#resolve({
      exitCode: failed === null ? (this.#exit?.code ?? null) : null,
      signal: failed === null ? (this.#exit?.signal ?? null) : null,
      timedOut: this.#timedOut,
      cancelled: this.#cancelled,
      stdout: failed === null ? this.#captures['1'].finish() : emptyCapture(),
      stderr: failed === null ? this.#captures['2'].finish() : emptyCapture(),
      durationMs: failed === null ? performance.now() - this.#startedAt : 0,
      startError: failed,
    });
  }
}
