/**
 * Progress of one `verify` call, as MCP `notifications/progress`. A client
 * that sent `_meta.progressToken` hears each real step — the ledger taken,
 * the patch proposed, each sandboxed run started and finished, its output
 * growing — so a long test suite does not look like a hung server (the SDK
 * client gives up after 60 s unless progress arrives and it was asked to
 * reset its timeout on progress).
 *
 * Output is reported when its total first passes each doubling (1 KiB,
 * 2 KiB, 4 KiB, …): a chatty test suite costs a few dozen notifications,
 * never one per chunk, and no timer decides anything.
 *
 * A keep-alive repeats the last step while nothing else is said, for a run
 * that is silent for longer than a client's timeout. It only repeats what is
 * already known; no answer depends on it.
 */
import type { VerifyProgressEvent } from '@crustcore/runtime';

/** One notifications/progress payload (without the token, which the notifier adds). */
export interface ProgressNote {
  readonly progress: number;
  readonly message: string;
}

export type SendProgress = (note: ProgressNote) => Promise<void>;

const FIRST_OUTPUT_REPORT = 1_024;
export const KEEP_ALIVE_MS = 20_000;

const words = (argv: readonly string[]): string => argv.join(' ').slice(0, 200);

/** The text a client shows for one sandbox event, or null for output below the next doubling. */
function describeEvent(event: VerifyProgressEvent): string {
  switch (event.kind) {
    case 'command-started':
      return `${event.purpose} run started in the sandbox: ${words(event.argv)}`;
    case 'command-output':
      return `${event.purpose} run: ${event.outputBytes} bytes of output so far`;
    case 'command-finished':
      return `${event.purpose} run finished: ${
        event.timedOut ? 'timed out' : `exit ${event.exitCode ?? 'none'}`
      }, ${event.outputBytes} bytes of output`;
  }
}

/** Sends the steps of one verify call; never throws (a client that went away just stops hearing). */
export class VerifyProgress {
  readonly #send: SendProgress;
  #count = 0;
  #last = 'verify accepted';
  readonly #nextOutputReport = { baseline: FIRST_OUTPUT_REPORT, verify: FIRST_OUTPUT_REPORT };
  #keepAlive: ReturnType<typeof setInterval> | null = null;

  constructor(send: SendProgress) {
    this.#send = send;
  }

  get sent(): number {
    return this.#count;
  }

  /** Sends one step; the promise settles once it is written (never rejects), so a caller can send it before an answer. */
  step(message: string): Promise<void> {
    this.#last = message;
    this.#count += 1;
    return this.#send({ progress: this.#count, message }).catch(() => undefined);
  }

  /** A sandbox event; output below the next doubling is not worth a notification. */
  event(event: VerifyProgressEvent): void {
    if (event.kind === 'command-output') {
      if (event.outputBytes < this.#nextOutputReport[event.purpose]) return;
      while (this.#nextOutputReport[event.purpose] <= event.outputBytes) this.#nextOutputReport[event.purpose] *= 2;
    }
    this.step(describeEvent(event));
  }

  /** Repeats the last step every `periodMs` until `stop` (for runs silent longer than a client waits). */
  startKeepAlive(periodMs: number = KEEP_ALIVE_MS): void {
    if (this.#keepAlive !== null) return;
    let seen = this.#count;
    this.#keepAlive = setInterval(() => {
      if (this.#count === seen) this.step(`still working: ${this.#last.replace(/^still working: /, '')}`);
      seen = this.#count;
    }, periodMs);
    this.#keepAlive.unref();
  }

  stop(): void {
    if (this.#keepAlive !== null) clearInterval(this.#keepAlive);
    this.#keepAlive = null;
  }
}
