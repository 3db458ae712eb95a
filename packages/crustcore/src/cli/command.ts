/**
 * The shape every CLI command takes. Commands parse their own flags with
 * node:util parseArgs (no CLI framework in nano) and return an exit code.
 */
import type { ExitCode } from './exit-codes.js';
import type { Io } from './output.js';

export interface Command {
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
  readonly run: (args: readonly string[], io: Io) => Promise<ExitCode>;
}

/** A usage error carries the hint to print; it never reaches the crash handler. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
