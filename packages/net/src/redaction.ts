/**
 * Keeps API keys out of every event a provider yields. Error bodies, network
 * error messages and (defensively) model text from a hostile endpoint could
 * echo the key; each string that leaves a provider passes through here.
 */
import type { StreamEvent } from './events.js';

export const REDACTED = '[redacted]';

/**
 * Keys shorter than this are not redacted from text: replacing a 3-character
 * test key everywhere would mangle ordinary words. Real keys are 30+ chars.
 */
export const MIN_REDACTABLE_LENGTH = 8;

// ─── model ────────────────────────────────────────────────────────────────

export class Redactor {
  readonly #secrets: readonly string[];

  constructor(secrets: readonly string[]) {
    this.#secrets = secrets.filter((secret) => secret.length >= MIN_REDACTABLE_LENGTH);
  }

  get active(): boolean {
    return this.#secrets.length > 0;
  }

  text(value: string): string {
    let out = value;
    for (const secret of this.#secrets) {
      if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    }
    return out;
  }

  /** Redacts every string field of a non-delta event (deltas go through a DeltaRedactor). */
  event(event: StreamEvent): StreamEvent {
    if (!this.active) return event;
    switch (event.type) {
      case 'tool_call': {
        const encoded = JSON.stringify(event.arguments);
        const cleaned = this.text(encoded);
        const name = this.text(event.name);
        if (cleaned === encoded && name === event.name) return event;
        return { ...event, name, arguments: JSON.parse(cleaned) };
      }
      case 'tool_call_error':
        return { ...event, name: this.text(event.name), raw: this.text(event.raw), message: this.text(event.message) };
      case 'error':
        return { ...event, error: { ...event.error, message: this.text(event.error.message) } };
      case 'retry':
        return { ...event, cause: { ...event.cause, message: this.text(event.cause.message) } };
      default:
        return event;
    }
  }
}

/**
 * Streaming redaction for one text channel. A key split across two deltas
 * must still be caught, so a delta whose tail could be the start of a key is
 * held back until the next delta (or `flush`) decides. Ordinary text, whose
 * tail is not a key prefix, passes through unchanged and undelayed.
 */
export class DeltaRedactor {
  readonly #redactor: Redactor;
  readonly #secrets: readonly string[];
  #held = '';

  constructor(redactor: Redactor, secrets: readonly string[]) {
    this.#redactor = redactor;
    this.#secrets = secrets.filter((secret) => secret.length >= MIN_REDACTABLE_LENGTH);
  }

  push(delta: string): string {
    if (this.#secrets.length === 0) return delta;
    const text = this.#redactor.text(this.#held + delta);
    const keep = this.#heldSuffixLength(text);
    this.#held = text.slice(text.length - keep);
    return text.slice(0, text.length - keep);
  }

  flush(): string {
    const rest = this.#held;
    this.#held = '';
    return rest;
  }

  /** Length of the longest suffix of `text` that is a proper prefix of some key. */
  #heldSuffixLength(text: string): number {
    let longest = 0;
    const last = text.charCodeAt(text.length - 1);
    for (const secret of this.#secrets) {
      const limit = Math.min(secret.length - 1, text.length);
      for (let length = limit; length > longest; length -= 1) {
        // Cheap first-character filter before the substring comparison.
        if (secret.charCodeAt(length - 1) === last && text.endsWith(secret.slice(0, length))) {
          longest = length;
          break;
        }
      }
    }
    return longest;
  }
}
