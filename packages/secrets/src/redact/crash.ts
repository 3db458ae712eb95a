/**
 * Errors are where secrets leak by accident: an HTTP client puts the request
 * headers in its error, a tool echoes its argv, a cause chain carries the
 * original failure. `redactError` rebuilds an error with message, stack,
 * cause chain, aggregated errors and extra properties all redacted;
 * `installCrashRedaction` makes the CLI's last-resort handlers print only that.
 */
import { inspect } from 'node:util';
import type { Redactor } from './redactor.js';

const MAX_CAUSE_DEPTH = 8;
const MAX_DETAIL_CHARS = 16 * 1024;

/** An error rebuilt from another, every text field redacted. */
export class RedactedError extends Error {
  override readonly name: string;
  /** Extra own properties of the original, rendered and redacted (e.g. `code`, `response`). */
  readonly details: string | null;

  constructor(name: string, message: string, stack: string, details: string | null, cause: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = name;
    this.stack = stack;
    this.details = details;
  }
}

const isErrorLike = (value: unknown): value is Error =>
  value instanceof Error ||
  (typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string');

function detailsOf(error: object): string | null {
  const extra: Record<string, unknown> = {};
  let any = false;
  for (const key of Object.keys(error)) {
    if (key === 'message' || key === 'stack' || key === 'cause' || key === 'name' || key === 'errors') continue;
    extra[key] = (error as Record<string, unknown>)[key];
    any = true;
  }
  if (!any) return null;
  const shown = inspect(extra, { depth: 4, breakLength: 120, maxStringLength: MAX_DETAIL_CHARS });
  return shown.length > MAX_DETAIL_CHARS ? `${shown.slice(0, MAX_DETAIL_CHARS)}…` : shown;
}

function rebuild(value: unknown, redactor: Redactor, depth: number, seen: Set<unknown>): unknown {
  if (!isErrorLike(value)) {
    if (value === undefined) return undefined;
    const shown = typeof value === 'string' ? value : inspect(value, { depth: 4, maxStringLength: MAX_DETAIL_CHARS });
    return redactor.redactText(shown);
  }
  if (seen.has(value) || depth > MAX_CAUSE_DEPTH) return redactor.redactText('[cause chain truncated]');
  seen.add(value);
  const name = typeof value.name === 'string' ? value.name : 'Error';
  const message = redactor.redactText(String(value.message));
  const stack = redactor.redactText(typeof value.stack === 'string' ? value.stack : `${name}: ${value.message}`);
  const details = detailsOf(value);
  const cause = 'cause' in value ? rebuild(value.cause, redactor, depth + 1, seen) : undefined;
  const rebuilt = new RedactedError(
    redactor.redactText(name),
    message,
    stack,
    details === null ? null : redactor.redactText(details),
    cause,
  );
  const errors = (value as { errors?: unknown }).errors;
  if (Array.isArray(errors)) {
    Object.defineProperty(rebuilt, 'errors', {
      value: errors.slice(0, 64).map((inner) => rebuild(inner, redactor, depth + 1, seen)),
      enumerable: false,
    });
  }
  return rebuilt;
}

/** A copy of `error` with message, stack, cause chain, aggregated errors and extra fields redacted. */
export function redactError(error: unknown, redactor: Redactor): RedactedError {
  const rebuilt = rebuild(error, redactor, 0, new Set());
  if (rebuilt instanceof RedactedError) return rebuilt;
  const text = typeof rebuilt === 'string' ? rebuilt : 'undefined';
  return new RedactedError('NonError', text, `NonError: ${text}`, null, undefined);
}

/** The text to print for an error: stack, details, then each cause, all redacted. */
export function formatRedactedError(error: unknown, redactor: Redactor): string {
  const lines: string[] = [];
  let current: unknown = redactError(error, redactor);
  let prefix = '';
  for (let depth = 0; current instanceof RedactedError && depth <= MAX_CAUSE_DEPTH; depth++) {
    lines.push(prefix + current.stack);
    if (current.details !== null) lines.push(`  details: ${current.details}`);
    const inner = (current as { errors?: unknown }).errors;
    if (Array.isArray(inner)) {
      for (const item of inner) if (item instanceof RedactedError) lines.push(`  [error] ${item.stack}`);
    }
    const cause: unknown = current.cause;
    if (cause !== undefined && !(cause instanceof RedactedError)) lines.push(`Caused by: ${String(cause)}`);
    current = cause;
    prefix = 'Caused by: ';
  }
  // Defence in depth: the assembled text goes through the redactor once more.
  return redactor.redactText(lines.join('\n'));
}

export interface CrashRedactionOptions {
  /** Where the report goes; default process.stderr. */
  readonly write?: (text: string) => void;
  /** Exit code after an uncaught exception or unhandled rejection; default 70 (internal error). */
  readonly exitCode?: number;
  /** Called instead of process.exit (tests); default process.exit. */
  readonly exit?: (code: number) => void;
}

/**
 * Replaces Node's default printing of uncaught exceptions and unhandled
 * rejections with a redacted report, then exits. Returns an uninstaller.
 */
export function installCrashRedaction(redactor: Redactor, options: CrashRedactionOptions = {}): () => void {
  const write = options.write ?? ((text: string) => process.stderr.write(text));
  const exitCode = options.exitCode ?? 70;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const report = (kind: string, error: unknown): void => {
    let text: string;
    try {
      text = formatRedactedError(error, redactor);
    } catch {
      // Never fall back to printing the raw error: that is the leak this exists to stop.
      text = '[crustcore: the error could not be formatted safely]';
    }
    write(`crustcore: ${kind}\n${text}\n`);
    exit(exitCode);
  };
  const onException = (error: unknown): void => report('uncaught exception', error);
  const onRejection = (reason: unknown): void => report('unhandled rejection', reason);
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
  };
}
