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
  const answer = answerFromSpecs(argv, io, commands);
  return typeof answer === 'number' ? answer : runCommand(answer, argv.slice(1), io);
}

async function runCommand(command: LazyCommand, args: readonly string[], io: Io): Promise<ExitCode> {
  // Descriptors whatever started us left open without close-on-exec are not ours and must reach no
  // child: closed before the command runs, every git and sandbox run then starts without the
  // descriptor-closing launcher. (Help and the version, answered above, start no child.)
  (await import('@crustcore/sandbox/descriptors')).closeInheritedDescriptors();
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
