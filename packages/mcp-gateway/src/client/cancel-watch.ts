/**
 * Cancellation of a session's calls with one `abort` listener per caller
 * signal for the session's life, not one per call. The runtime hands every
 * call of a task the same task-long signal, and adding and removing a
 * listener on an AbortSignal (Node's EventTarget) each call cost more than
 * the rest of the gateway's own per-call work.
 *
 * A signal that aborts while one of its calls is in flight runs `onCancel`
 * (the session stops its server); one that aborts with none in flight does
 * nothing. Signals made per call (code mode makes one for each) are let go
 * in batches, so the listeners held stay bounded.
 */

/** Signals listened to at once, beyond those with a call in flight. */
export const MAX_WATCHED_SIGNALS = 16;

export class CancelWatch {
  readonly #onCancel: () => void;
  /** Calls in flight per signal; a signal has an entry only while one is. */
  readonly #inflight = new Map<AbortSignal, number>();
  /** Every signal listened to, with its listener, so it can be removed again. */
  readonly #listeners = new Map<AbortSignal, () => void>();
  #disposed = false;

  constructor(onCancel: () => void) {
    this.#onCancel = onCancel;
  }

  /** How many signals hold a listener of this watch (tests). */
  get watched(): number {
    return this.#listeners.size;
  }

  /** A call starts under `signal`. */
  begin(signal: AbortSignal): void {
    if (!this.#disposed && !this.#listeners.has(signal)) this.#listen(signal);
    this.#inflight.set(signal, (this.#inflight.get(signal) ?? 0) + 1);
  }

  /** A call under `signal` is over (answered, failed or cancelled). */
  end(signal: AbortSignal): void {
    const left = (this.#inflight.get(signal) ?? 1) - 1;
    if (left > 0) this.#inflight.set(signal, left);
    else this.#inflight.delete(signal);
  }

  /** Removes every listener: the session is closed, and a task-long signal must not keep it. */
  dispose(): void {
    this.#disposed = true;
    for (const [signal, listener] of this.#listeners) signal.removeEventListener('abort', listener);
    this.#listeners.clear();
  }

  #listen(signal: AbortSignal): void {
    if (this.#listeners.size >= MAX_WATCHED_SIGNALS) this.#prune();
    const listener = (): void => {
      if (this.#inflight.has(signal)) this.#onCancel();
    };
    signal.addEventListener('abort', listener, { once: true });
    this.#listeners.set(signal, listener);
  }

  /** Lets go of the signals with nothing in flight. */
  #prune(): void {
    for (const [signal, listener] of this.#listeners) {
      if (this.#inflight.has(signal)) continue;
      signal.removeEventListener('abort', listener);
      this.#listeners.delete(signal);
    }
  }
}
