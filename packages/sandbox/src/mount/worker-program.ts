/**
 * The worker's own files. A `--worker` program usually lives outside the
 * task worktree: an untracked `./fix.sh` in the user's checkout,
 * `/home/me/bin/agent`, or a script handed to an interpreter
 * (`node /abs/agent.mjs`, `python3 tool.py`). The sandbox sees only the
 * worktree and the system directories, so such a worker died with "not
 * found" and the user saw only "the worker changed nothing".
 *
 * This resolves the program host-side (relative names against the user's
 * directory, bare names on the user's PATH) and names the few read-only
 * binds that make exactly those files visible: the program file, its
 * `#!` interpreter when that is outside the system view, and for an
 * interpreter + script the script's directory (its sibling modules). Never
 * $HOME or a credential directory: a directory the bind checks refuse
 * falls back to the file alone. argv words are rewritten to the real paths
 * that exist inside.
 */
import { accessSync, closeSync, constants, existsSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { basename, delimiter, dirname, isAbsolute, resolve } from 'node:path';
import { checkExtraBinds, type ExtraBindRequest } from './extra-bind.js';
import { systemVisibleRoots } from './host-layout.js';
import { isInside, overlaps } from './path-shape.js';

/** Where the user typed the worker command: their directory and their PATH. */
export interface WorkerHost {
  readonly cwd: string;
  readonly path: string;
  /** Paths no bind may contain or lie in (the task worktree: binds overlapping it are refused). */
  readonly avoid?: readonly string[];
}

export interface WorkerProgram {
  /** The argv to run inside the sandbox. */
  readonly argv: readonly [string, ...string[]];
  /** Read-only binds (target = source) that make the worker's files visible. */
  readonly binds: readonly ExtraBindRequest[];
}

/** Programs whose first non-option argument is a script to run. */
const INTERPRETER =
  /^(?:node|nodejs|python[\d.]*|pypy[\d.]*|bash|sh|dash|zsh|ksh|ruby|perl|php|deno|bun|tsx|ts-node|lua)$/;
/** Interpreters that take a subcommand before the script (`deno run x.ts`, `bun run x.ts`). */
const SUBCOMMANDS = new Set(['run', 'test']);

function regularFile(path: string): string | null {
  try {
    const real = realpathSync(path);
    return statSync(real).isFile() ? real : null;
  } catch {
    return null;
  }
}

function executableOnPath(name: string, path: string, cwd: string): string | null {
  for (const entry of path.split(delimiter)) {
    if (entry === '') continue;
    const candidate = resolve(cwd, entry, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not in this PATH entry.
    }
  }
  return null;
}

const visibleInside = (real: string): boolean => systemVisibleRoots().some((root) => isInside(real, root));

/** `#!/opt/tool/bin/node -x` → `/opt/tool/bin/node`; null when the file is not a script. */
function shebangInterpreter(file: string): string | null {
  let descriptor: number | null = null;
  try {
    descriptor = openSync(file, 'r');
    const buffer = Buffer.alloc(256);
    const read = readSync(descriptor, buffer, 0, buffer.length, 0);
    const first = buffer.subarray(0, read).toString('utf8').split('\n')[0] ?? '';
    const match = /^#!\s*(\/\S+)/.exec(first);
    return match?.[1] ?? null;
  } catch {
    return null;
  } finally {
    if (descriptor !== null) closeSync(descriptor);
  }
}

/**
 * The script's directory when that is safe to show, else the file alone. A
 * directory holding a `.git` is a checkout whose untracked files (`.env`)
 * the worker must not read, so a script at a repository's top gets no
 * directory bind.
 */
function directoryOrFile(file: string, host: WorkerHost): ExtraBindRequest {
  const source = dirname(file);
  const safe =
    !existsSync(`${source}/.git`) &&
    !(host.avoid ?? []).some((path) => overlaps(path, source)) &&
    checkExtraBinds([{ source, mode: 'read-only' }])._tag === 'Right';
  return { source: safe ? source : file, mode: 'read-only' };
}

/** Adds a bind the checks accept; one inside another is redundant, a wider one replaces those it covers. */
function keep(binds: ExtraBindRequest[], request: ExtraBindRequest, host: WorkerHost): void {
  if (checkExtraBinds([request])._tag === 'Left') return;
  if ((host.avoid ?? []).some((path) => overlaps(path, request.source))) return;
  if (binds.some((bind) => isInside(request.source, bind.source))) return;
  for (let i = binds.length - 1; i >= 0; i -= 1) {
    if (isInside((binds[i] as ExtraBindRequest).source, request.source)) binds.splice(i, 1);
  }
  binds.push(request);
}

/** Resolves argv[0]: a path against the user's directory, a bare name on the user's PATH. */
function resolveProgram(word: string, host: WorkerHost): { readonly real: string; readonly named: string } | null {
  const named = word.includes('/') ? resolve(host.cwd, word) : executableOnPath(word, host.path, host.cwd);
  if (named === null) return null;
  const real = regularFile(named);
  return real === null ? null : { real, named };
}

/** The index of the script an interpreter is given, or -1. */
function scriptIndex(argv: readonly string[]): number {
  for (let i = 1; i < argv.length; i += 1) {
    const word = argv[i] as string;
    if (word === '--') return i + 1 < argv.length ? i + 1 : -1;
    if (word.startsWith('-')) {
      // `-c code` / `-e code` / `-m module`: no script file follows.
      if (/^-(?:c|e|m|p|-eval|-print)$/.test(word)) return -1;
      continue;
    }
    if (i === 1 && SUBCOMMANDS.has(word)) continue;
    return i;
  }
  return -1;
}

/** The argv and binds that let the worker's own files be found inside the sandbox. */
export function resolveWorkerProgram(argv: readonly [string, ...string[]], host: WorkerHost): WorkerProgram {
  const out: [string, ...string[]] = [...argv];
  const binds: ExtraBindRequest[] = [];
  const program = resolveProgram(argv[0], host);
  if (program !== null) {
    if (!visibleInside(program.real)) {
      keep(binds, { source: program.real, mode: 'read-only' }, host);
      out[0] = program.real;
    } else if (argv[0].includes('/')) {
      out[0] = visibleInside(program.named) ? program.named : program.real;
    }
    const interpreter = shebangInterpreter(program.real);
    const interpreterReal = interpreter === null ? null : regularFile(interpreter);
    if (interpreterReal !== null && !visibleInside(interpreterReal)) {
      keep(binds, directoryOrFile(interpreterReal, host), host);
    }
  }
  if (INTERPRETER.test(basename(argv[0]))) {
    const index = scriptIndex(argv);
    const word = index === -1 ? undefined : argv[index];
    const script = word === undefined ? null : regularFile(isAbsolute(word) ? word : resolve(host.cwd, word));
    if (script !== null && !visibleInside(script)) {
      keep(binds, directoryOrFile(script, host), host);
      out[index] = script;
    }
  }
  return { argv: out, binds };
}
