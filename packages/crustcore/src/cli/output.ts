/**
 * Terminal output for people and machines. Colors only when the stream is a
 * TTY and NO_COLOR is unset; `--json` switches every command to one JSON
 * document (or one JSON object per line for streams) on stdout.
 */
import type { Writable } from 'node:stream';
import { guardOutput } from '@crustcore/safe-text';

export interface Style {
  readonly bold: (s: string) => string;
  readonly dim: (s: string) => string;
  readonly red: (s: string) => string;
  readonly green: (s: string) => string;
  readonly yellow: (s: string) => string;
  readonly cyan: (s: string) => string;
}

const plain = (s: string): string => s;
const sgr =
  (open: number, close: number) =>
  (s: string): string =>
    `\u001b[${open}m${s}\u001b[${close}m`;

/** Where a line of text goes: a node Writable, or the bin's synchronous descriptor writer (sync-answer.ts). */
export interface TextOut {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

export function makeStyle(stream: TextOut, env: NodeJS.ProcessEnv): Style {
  const color = stream.isTTY === true && env.NO_COLOR === undefined && env.TERM !== 'dumb';
  if (!color) return { bold: plain, dim: plain, red: plain, green: plain, yellow: plain, cyan: plain };
  return {
    bold: sgr(1, 22),
    dim: sgr(2, 22),
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow: sgr(33, 39),
    cyan: sgr(36, 39),
  };
}

export interface Io {
  readonly stdout: Writable & { isTTY?: boolean };
  readonly stderr: Writable & { isTTY?: boolean };
  readonly stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readonly out: Style;
  readonly err: Style;
}

export function processIo(): Io {
  return {
    // Every write of the CLI's own output is guarded (terminal-text.ts in @crustcore/safe-text): no command can send the
    // terminal a control, bidi or invisible character it did not mean to, whatever it forgot to sanitize.
    stdout: guardOutput(process.stdout),
    stderr: guardOutput(process.stderr),
    stdin: process.stdin,
    env: process.env,
    cwd: process.cwd(),
    out: makeStyle(process.stdout, process.env),
    err: makeStyle(process.stderr, process.env),
  };
}

export const writeLine = (stream: TextOut, line = ''): void => {
  stream.write(`${line}\n`);
};
