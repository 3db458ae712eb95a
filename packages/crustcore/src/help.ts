/**
 * Everything the CLI answers from the command specs alone: the help, a
 * command's help, the version and a mistyped name. Imports no command and no
 * package (the terminal guard aside), so the start-up path (fast-start.ts)
 * can answer these without loading the rest of the CLI.
 */
import type { CommandSpec } from './cli/command.js';
import { ExitCode } from './cli/exit-codes.js';
import { writeLine } from './cli/output.js';
import type { AnswerIo } from './cli/sync-answer.js';

declare const CRUSTCORE_VERSION: string;
export const VERSION: string = typeof CRUSTCORE_VERSION === 'string' ? CRUSTCORE_VERSION : '0.0.0-dev';

function helpText(io: AnswerIo, commands: readonly CommandSpec[]): string {
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

/** Edit distance, for "did you mean"; names are short, so the quadratic table is cheap. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** The closest command names (at most two edits away, or sharing a prefix of three letters). */
export function suggestCommands(name: string, commands: readonly CommandSpec[]): string[] {
  const lower = name.toLowerCase();
  return commands
    .map((c) => ({ name: c.name, d: distance(lower, c.name) }))
    .filter(({ name: n, d }) => d <= 2 || (lower.length >= 3 && n.startsWith(lower.slice(0, 3))))
    .sort((x, y) => x.d - y.d)
    .slice(0, 3)
    .map(({ name: n }) => n);
}

function unknownCommand(io: AnswerIo, name: string, commands: readonly CommandSpec[]): ExitCode {
  const suggestions = suggestCommands(name, commands);
  const hint = suggestions.length > 0 ? ` Did you mean ${suggestions.map((n) => `"${n}"`).join(' or ')}?` : '';
  writeLine(
    io.stderr,
    `${io.err.red('error:')} unknown command "${name}".${hint} Run "crustcore --help" to see the commands.`,
  );
  return ExitCode.usage;
}

const commandHelp = (command: CommandSpec): string => `${command.summary}\n\nUsage: ${command.usage}`;

/**
 * The answer (an exit code) when the arguments need no command to run — help, the version, a
 * command's --help, an unknown name — or else the command they name, to run.
 */
export function answerFromSpecs<C extends CommandSpec>(
  argv: readonly string[],
  io: AnswerIo,
  commands: readonly C[],
): ExitCode | C {
  const [first, ...rest] = argv;
  if (first === 'help' && rest[0] !== undefined) {
    // `crustcore help run` is `crustcore run --help`.
    const command = commands.find((c) => c.name === rest[0]);
    if (command === undefined) return unknownCommand(io, rest[0], commands);
    writeLine(io.stdout, commandHelp(command));
    return ExitCode.ok;
  }
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    writeLine(io.stdout, helpText(io, commands));
    return ExitCode.ok;
  }
  if (first === '--version' || first === '-V' || first === '-v' || first === 'version') {
    writeLine(io.stdout, `crustcore ${VERSION}`);
    return ExitCode.ok;
  }
  const command = commands.find((c) => c.name === first);
  if (command === undefined) return unknownCommand(io, first, commands);
  if (rest.includes('--help') || rest.includes('-h')) {
    writeLine(io.stdout, commandHelp(command));
    return ExitCode.ok;
  }
  return command;
}
