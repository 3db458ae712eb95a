/**
 * Documented exit codes (docs/cli.md). Stable: scripts depend on them.
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
  /** `inspect`: the log or its artifacts failed verification. */
  integrity: 6,
  /** Cancelled or killed (Ctrl+C, `crustcore cancel`, `kill`). */
  interrupted: 130,
  /** Bug or environment failure; the message says what to do. */
  internal: 70,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
