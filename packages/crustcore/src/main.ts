/**
 * crustcore CLI entry point. Nano: only the kernel-side commands are bundled;
 * pack commands load their pack on demand.
 */
import { type Command, UsageError } from './cli/command.js';
import { ExitCode } from './cli/exit-codes.js';
import { type Io, writeLine } from './cli/output.js';
import { commandTable } from './commands/table.js';

declare const CRUSTCORE_VERSION: string;
export const VERSION: string = typeof CRUSTCORE_VERSION === 'string' ? CRUSTCORE_VERSION : '0.0.0-dev';

function helpText(io: Io, commands: readonly Command[]): string {
  const s = io.out;
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = [
    `${s.bold('crustcore')} ${VERSION} — a verifier kernel for coding agents`,
    '',
    `${s.bold('Usage:')} crustcore <command> [options]`,
    '',
    s.bold('Commands:'),
    ...commands.map((c) => `  ${s.cyan(c.name.padEnd(width))}  ${c.summary}`),
    '',
    `Run ${s.cyan('crustcore <command> --help')} for a command's options.`,
    `Start here: ${s.cyan('crustcore demo')}`,
  ];
  return lines.join('\n');
}

export async function main(argv: readonly string[], io: Io): Promise<ExitCode> {
  const commands = await commandTable();
  const [first, ...rest] = argv;
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    writeLine(io.stdout, helpText(io, commands));
    return ExitCode.ok;
  }
  if (first === '--version' || first === '-V' || first === 'version') {
    writeLine(io.stdout, `crustcore ${VERSION}`);
    return ExitCode.ok;
  }
  const command = commands.find((c) => c.name === first);
  if (command === undefined) {
    writeLine(
      io.stderr,
      `${io.err.red('error:')} unknown command "${first}". Run "crustcore --help" to see the commands.`,
    );
    return ExitCode.usage;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    writeLine(io.stdout, `${command.summary}\n\nUsage: ${command.usage}`);
    return ExitCode.ok;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      writeLine(io.stderr, `${io.err.red('error:')} ${(error as Error).message}`);
      writeLine(io.stderr, `usage: ${command.usage}`);
      return ExitCode.usage;
    }
    throw error;
  }
}
