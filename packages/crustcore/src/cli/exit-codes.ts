import type { IntegrityReason } from '@crustcore/ledger';

/**
 * Documented exit codes (README.md for `run`, docs/event-log.md for `inspect`).
 * Stable: scripts depend on them.
 */
export const ExitCode = {
  ok: 0,
  /** Verification failed after all attempts (revisit budget spent). */
  verifyFailed: 1,
  /** Bad command line or bad input. */
  usage: 2,
  /** A budget (turns, tokens, cost, time) ran out. */
  budgetExhausted: 3,
  /** Approval denied (or could not be asked). */
  denied: 4,
  /** The user's tree changed under the patch since the base was recorded. */
  drift: 5,
  /** A log, patch or vault failed verification (`export`, `diff`, `secret`); `inspect` is finer, below. */
  integrity: 6,
  /**
   * The verify command fails on the unmodified base for an environment reason (a command or
   * dependency missing in the sandbox, no network): nothing a worker changes can fix that.
   */
  environment: 7,
  /** The repository's event log is in use by another process (a run, chat, daemon task or MCP call): try again. */
  busy: 75,
  /** Cancelled or killed (Ctrl+C, `crustcore cancel`, `kill`). */
  interrupted: 130,
  /** Bug or environment failure; the message says what to do. */
  internal: 70,
} as const;

/**
 * `inspect` exits with one code per integrity reason, so a script can tell a
 * cut log (crash or truncation) from a forged receipt without parsing text.
 * Codes 10–20 follow the order of INTEGRITY_REASONS; never renumber.
 */
export const INSPECT_EXIT = {
  'bad-hash': 10,
  'broken-link': 11,
  'missing-frame': 12,
  reordered: 13,
  truncated: 14,
  'head-mismatch': 15,
  'bad-payload': 16,
  'bad-receipt': 17,
  'missing-artifact': 18,
  'bad-artifact': 19,
  'replay-divergence': 20,
} as const satisfies Record<IntegrityReason, number>;

/** `inspect --database-url`: the log is intact but its mirror in the state plane disagrees with it. */
export const INSPECT_MIRROR_MISMATCH = 21;

export type ExitCode =
  | (typeof ExitCode)[keyof typeof ExitCode]
  | (typeof INSPECT_EXIT)[IntegrityReason]
  | typeof INSPECT_MIRROR_MISMATCH;
