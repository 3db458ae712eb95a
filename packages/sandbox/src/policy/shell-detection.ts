/**
 * Does an argv start a shell or run inline code? Judged on argv structure:
 * the program's base name, looking through wrappers (`env`, `nice`,
 * `timeout`, …) that exec another program, and interpreter flags that take
 * a code string (`node -e`, `python -c`).
 */
import { basename } from 'node:path';

const SHELLS = new Set([
  'sh',
  'bash',
  'dash',
  'zsh',
  'ksh',
  'mksh',
  'ash',
  'fish',
  'csh',
  'tcsh',
  'rbash',
  'busybox',
  'pwsh',
  'powershell',
]);

/** Programs that run another program named somewhere in their arguments. */
const WRAPPERS = new Set([
  'env',
  'nice',
  'nohup',
  'timeout',
  'setsid',
  'stdbuf',
  'ionice',
  'taskset',
  'chrt',
  'time',
  'xargs',
  'command',
  'exec',
  'sudo',
  'doas',
  'su',
  'runuser',
  'setpriv',
  'flock',
  'unbuffer',
  'script',
  'strace',
  'ltrace',
  'watch',
  'prlimit',
  'unshare',
  'nsenter',
  'chroot',
  'find',
  'parallel',
]);

/** Interpreters and the flags after which the next argument (or the flag's tail) is code. */
const INLINE_CODE_FLAGS: ReadonlyMap<string, readonly string[]> = new Map([
  ['node', ['-e', '--eval', '-p', '--print']],
  ['nodejs', ['-e', '--eval', '-p', '--print']],
  ['deno', ['eval']],
  ['bun', ['-e', '--eval']],
  ['python', ['-c']],
  ['python2', ['-c']],
  ['python3', ['-c']],
  ['perl', ['-e', '-E']],
  ['ruby', ['-e']],
  ['php', ['-r']],
  ['lua', ['-e']],
  ['awk', []],
  ['osascript', ['-e']],
]);

/** Interpreter flags that take the next argument as their value (so it is not the script). */
const VALUE_FLAGS: ReadonlyMap<string, readonly string[]> = new Map([
  [
    'node',
    [
      '-r',
      '--require',
      '--import',
      '--loader',
      '--experimental-loader',
      '-C',
      '--conditions',
      '--input-type',
      '--title',
    ],
  ],
  [
    'nodejs',
    ['-r', '--require', '--import', '--loader', '--experimental-loader', '-C', '--conditions', '--input-type'],
  ],
  ['python', ['-W', '-X']],
  ['python2', ['-W', '-X']],
  ['python3', ['-W', '-X']],
  ['perl', ['-I', '-M']],
  ['ruby', ['-I', '-r']],
]);

function isCodeFlag(arg: string, flags: readonly string[]): boolean {
  for (const flag of flags) {
    if (arg === flag) return true;
    if (flag.startsWith('--') && arg.startsWith(`${flag}=`)) return true;
    // Short flags cluster or carry their value: `-pe`, `-ccode`, `-Mstrict -e`.
    if (
      !flag.startsWith('--') &&
      flag.startsWith('-') &&
      !arg.startsWith('--') &&
      arg.slice(1).includes(flag.slice(1))
    ) {
      return true;
    }
  }
  return false;
}

/** Base name without a version suffix (`python3.11` → `python3`). */
function programName(arg: string): string {
  return basename(arg).replace(/^(python\d?)\.\d+$/, '$1');
}

/** How an argv reaches a shell or inline code; null when it does not. */
export function shellUse(argv: readonly string[]): string | null {
  if (argv.length === 0) return null;
  const program = programName(argv[0] as string);
  if (SHELLS.has(program)) return `${program} is a shell`;
  if (WRAPPERS.has(program)) {
    // Over-approximate: any later argument naming a shell or an inline-code
    // interpreter counts, whatever the wrapper's own option syntax.
    for (const [index, arg] of argv.entries()) {
      if (index === 0) continue;
      if (program === 'env' && (arg === '-S' || arg.startsWith('--split-string')))
        return 'env -S splits a command string';
      const nested = shellUse(argv.slice(index));
      if (nested !== null) return `${program} runs ${nested}`;
    }
    return null;
  }
  const flags = INLINE_CODE_FLAGS.get(program);
  if (flags === undefined) return null;
  if (flags.length === 0) return `${program} programs are inline code`;
  const valueFlags = VALUE_FLAGS.get(program) ?? [];
  for (let index = 1; index < argv.length; index++) {
    const arg = argv[index] as string;
    if (arg === '--' || arg === '-m' || !arg.startsWith('-')) break; // the rest belongs to the script or module
    if (isCodeFlag(arg, flags)) return `${program} ${arg.slice(0, 16)} runs inline code`;
    if (valueFlags.includes(arg)) index += 1;
  }
  return null;
}
