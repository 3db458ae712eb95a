/**
 * The bin's output when it answers from the specs alone (the help, the version, a command's help,
 * a mistyped name): written with `writeSync` on descriptors 1 and 2. Touching `process.stdout`,
 * `process.stderr` or `process.stdin` makes Node load its stream and tty modules, which was a
 * third of `crustcore --version`'s time over bare `node -e 0` (benches/startup.bench.ts).
 *
 * The text is guarded like every other write of the CLI's (guardTerminalText); colours only on a
 * terminal: a character device is one by its device number on Linux (a pseudo-terminal, a console)
 * or asked `isatty` when the number does not say (the tty module is loaded only then); anything
 * else — a pipe, a file, /dev/null — is not one. A reader that went away is a quiet exit 0, as for every
 * command (closed-pipe.ts). A descriptor someone left non-blocking and full (EAGAIN) hands the
 * rest to Node's own stream, which waits for it.
 */
import { fstatSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { guardTerminalText } from '@crustcore/safe-text';
import { isClosedPipe } from './closed-pipe.js';
import { ExitCode } from './exit-codes.js';
import { makeStyle, type Style, type TextOut } from './output.js';

export interface AnswerIo {
  readonly stdout: TextOut;
  readonly stderr: TextOut;
  readonly out: Style;
  readonly err: Style;
}

/**
 * What a character device's number says on Linux: a terminal (major 4: the consoles and serial
 * ports, 5: /dev/tty and /dev/console, 136–143: pseudo-terminals — what a terminal window gives),
 * not one (major 1: /dev/null, /dev/zero, the random devices), or unknown (ask the tty module).
 * Loading node:tty (which loads net and stream) was a fifth of the bin's time on a terminal.
 */
export function linuxTerminalKind(rdev: number): 'terminal' | 'not-terminal' | 'unknown' {
  const major = Math.floor(rdev / 256) % 4096;
  if (major === 4 || major === 5 || (major >= 136 && major <= 143)) return 'terminal';
  if (major === 1) return 'not-terminal';
  return 'unknown';
}

/** Whether the descriptor is a terminal, without loading the tty module for a pipe, a file or a known device. */
function isTerminal(fd: number): boolean {
  let rdev: number;
  try {
    const stat = fstatSync(fd);
    if (!stat.isCharacterDevice()) return false;
    rdev = stat.rdev;
  } catch {
    return false;
  }
  const kind = process.platform === 'linux' ? linuxTerminalKind(rdev) : 'unknown';
  if (kind !== 'unknown') return kind === 'terminal';
  // A builtin resolves from any base; the bin is CommonJS, where import.meta is empty.
  const tty = createRequire(process.execPath)('node:tty') as typeof import('node:tty');
  return tty.isatty(fd);
}

function syncSink(fd: 1 | 2): TextOut & { readonly isTTY: boolean } {
  const stream = (): NodeJS.WriteStream => (fd === 1 ? process.stdout : process.stderr);
  return {
    isTTY: isTerminal(fd),
    write(text: string): boolean {
      const bytes = Buffer.from(guardTerminalText(text));
      let at = 0;
      try {
        while (at < bytes.length) at += writeSync(fd, bytes, at);
      } catch (error) {
        if (isClosedPipe(error)) process.exit(ExitCode.ok);
        if ((error as { code?: unknown }).code !== 'EAGAIN') throw error;
        stream().on('error', (late) => isClosedPipe(late) && process.exit(ExitCode.ok));
        stream().write(bytes.subarray(at));
      }
      return true;
    },
  };
}

export function syncAnswerIo(env: NodeJS.ProcessEnv): AnswerIo {
  const stdout = syncSink(1);
  const stderr = syncSink(2);
  return { stdout, stderr, out: makeStyle(stdout, env), err: makeStyle(stderr, env) };
}
