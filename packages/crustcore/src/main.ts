/**
 * crustcore CLI entry point. Nano: only the kernel-side commands are bundled;
 * pack commands load their pack on demand. Help, the version and a mistyped
 * name are answered from the command table's specs (help.ts): a command's
 * module loads only when it runs.
 */
import { type LazyCommand, UsageError } from './cli/command.js';
import { ExitCode } from './cli/exit-codes.js';
import { type Io, writeLine } from './cli/output.js';
import { commandTable } from './commands/table.js';
import { answerFromSpecs } from './help.js';

export { suggestCommands, VERSION } from './help.js';

export async function main(argv: readonly string[], io: Io): Promise<ExitCode> {
  const commands = await commandTable();
  const answered = answerFromSpecs(argv, io, commands);
  if (answered !== undefined) return answered;
  const [name, ...rest] = argv;
  const command = commands.find((c) => c.name === name);
  // answerFromSpecs answered every argv that names no command.
  if (command === undefined) throw new Error(`no command ${String(name)}`);
  return runCommand(command, rest, io);
}

async function runCommand(command: LazyCommand, args: readonly string[], io: Io): Promise<ExitCode> {
  const loaded = await command.load();
  try {
    return await loaded.run(args, io);
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      writeLine(io.stderr, `${io.err.red('error:')} ${(error as Error).message}`);
      writeLine(io.stderr, `usage: ${command.usage}`);
      return ExitCode.usage;
    }
    throw error;
  }
}
