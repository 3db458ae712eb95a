/**
 * A live status line for a person at a terminal: a spinner, the step the
 * task is in, the time since it started and, when the backend reports model
 * use, tokens and cost. It is redrawn in place on stderr and only ever exists
 * when stderr is a terminal (run.ts decides), so pipes, logs and `--json` see
 * nothing of it. Before every narration line it is erased, and drawn again
 * after; while an approval prompt waits for an answer it is not drawn at all.
 * The line is cut to the terminal's width, since a wrapped line could not be
 * erased with one carriage return. Its two controls (carriage return, erase
 * line) go past the CLI's output guard, which escapes every control it did
 * not write itself; the text between them is sanitized like any other.
 */
import type { Writable } from 'node:stream';
import type { Action, KernelEvent } from '@crustcore/kernel';
import type { Narrator } from '@crustcore/runtime';
import { sanitizeForTerminal, unguarded } from '@crustcore/runtime';
import type { Style } from '../cli/output.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const ERASE = '\r\u001b[2K';
const TICK_MS = 120;

/** Calls `tick` now and then until the returned stop is called (a timer that never keeps the process alive). */
export type Ticker = (tick: () => void) => () => void;

const realTicker: Ticker = (tick) => {
  const timer = setInterval(tick, TICK_MS);
  timer.unref();
  return () => clearInterval(timer);
};

export interface StatusStream extends Writable {
  readonly columns?: number;
}

/** What the task is doing, in words, after this event and its actions; null keeps the step. */
function stepAfter(event: KernelEvent, actions: readonly Action[]): string | null {
  const started = actions.find((a) => a.kind === 'StartAttempt');
  if (started !== undefined) return `attempt ${started.attempt}: the worker is running`;
  if (actions.some((a) => a.kind === 'RequestApproval')) return 'waiting for approval';
  switch (event.kind) {
    case 'TaskCreated':
      return 'preparing the worktree';
    case 'PatchProposed':
      return 'verifying the patch in a fresh worktree';
    case 'PatchVerified':
      return 'deciding';
    case 'ApprovalResolved':
      return event.decision === 'granted' ? 'applying the patch' : 'finishing';
    default:
      return null;
  }
}

export class StatusLine {
  readonly #stream: StatusStream;
  readonly #style: Style;
  readonly #nowMs: () => number;
  readonly #startedMs: number;
  #stopTicker: (() => void) | null;
  #step = 'starting';
  #frame = 0;
  #shown = false;
  #paused = false;
  #tokens = 0;
  #costMicros = 0;

  constructor(stream: StatusStream, style: Style, options: { nowMs?: () => number; ticker?: Ticker } = {}) {
    this.#stream = unguarded(stream);
    this.#style = style;
    this.#nowMs = options.nowMs ?? (() => performance.now());
    this.#startedMs = this.#nowMs();
    this.#stopTicker = (options.ticker ?? realTicker)(() => this.#tick());
  }

  /** Erases the line (before a narration line is written). */
  clear(): void {
    if (!this.#shown) return;
    this.#stream.write(ERASE);
    this.#shown = false;
  }

  /** Follows the task: its step, its model use, and whether a prompt owns the terminal now. */
  observe(event: KernelEvent, actions: readonly Action[]): void {
    if (event.kind === 'ModelOutputReceived') {
      this.#tokens += event.inputTokens + event.outputTokens;
      this.#costMicros += event.costMicros;
    }
    const step = stepAfter(event, actions);
    if (step !== null) this.#step = step;
    if (actions.some((a) => a.kind === 'TaskFinished')) {
      this.stop();
      return;
    }
    this.#paused = actions.some((a) => a.kind === 'RequestApproval');
    this.draw();
  }

  /** A setup or another long step the runtime narrates as a note. */
  noted(kind: string): void {
    if (kind === 'environment.progress') this.#step = 'setting up dependencies';
    this.draw();
  }

  draw(): void {
    if (this.#stopTicker === null || this.#paused) return;
    const seconds = ((this.#nowMs() - this.#startedMs) / 1_000).toFixed(1);
    const usage = this.#tokens > 0 ? ` · ${this.#tokens} tokens` : '';
    const cost = this.#costMicros > 0 ? ` · $${(this.#costMicros / 1_000_000).toFixed(4)}` : '';
    const text = `${FRAMES[this.#frame % FRAMES.length]} ${this.#step} · ${seconds} s${usage}${cost}`;
    const width = Math.max(10, (this.#stream.columns ?? 80) - 1);
    this.#stream.write(`${ERASE}${this.#style.dim(sanitizeForTerminal([...text].slice(0, width).join('')))}`);
    this.#shown = true;
  }

  /** Erases the line for good; safe to call twice. */
  stop(): void {
    this.#stopTicker?.();
    this.#stopTicker = null;
    this.clear();
  }

  #tick(): void {
    this.#frame += 1;
    this.draw();
  }
}

/** `base`'s narration with the status line erased before each line and drawn again after. */
export function narrateWithStatus(base: Narrator, status: StatusLine): Narrator {
  return {
    event(event, actions) {
      status.clear();
      base.event(event, actions);
      status.observe(event, actions);
    },
    note(kind, detail) {
      status.clear();
      base.note(kind, detail);
      status.noted(kind);
    },
  };
}

/** Only for a person: text output, stderr a terminal that can move its cursor. */
export function wantsStatusLine(format: string, stderr: { readonly isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return format === 'text' && stderr.isTTY === true && env.TERM !== 'dumb' && env.CI === undefined;
}
