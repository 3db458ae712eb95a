/**
 * The shape every CLI command takes. Commands parse their own flags with
 * node:util parseArgs (no CLI framework in nano) and return an exit code.
 */
import type { ExitCode } from './exit-codes.js';
import type { Io } from './output.js';

/**
 * What `--help` shows of a command: plain strings, kept in a module that imports nothing, so
 * help, `--version` and a mistyped name answer without loading any command or pack. The
 * command's own module spreads the same object, so its help has one source.
 */
export interface CommandSpec {
  readonly name: string;
  readonly summary: string;
  readonly usage: string;
}

export interface Command extends CommandSpec {
  readonly run: (args: readonly string[], io: Io) => Promise<ExitCode>;
}

/** A row of the command table: the spec, and the command's module loaded only when it runs. */
export interface LazyCommand extends CommandSpec {
  readonly load: () => Promise<Command>;
}

/** A usage error carries the hint to print; it never reaches the crash handler. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
