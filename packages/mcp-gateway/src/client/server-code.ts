/**
 * Where a stdio server's code comes from. The gateway starts a server with the task worktree as its
 * working directory — and the worktree is what the native agent or a worker writes. A server whose
 * code is read from that directory (a script next to it, a module an interpreter resolves from it,
 * a package a launcher installs there) would run code the model wrote, with the server's
 * credential and read paths; started lazily, or reading lazily, it would do so whenever the model
 * first asked for it. So such a server never runs on the task worktree: it runs on the user's own
 * checkout, read-only (client/server-session.ts).
 *
 * The test is on the record's command line, which a person approved, never on files the model can
 * change: the program, when it is a path (not a name found on PATH) inside the repository or
 * relative; a launcher that resolves packages from its working directory; for an interpreter, every
 * argument up to and including its script (an option's value may be a module path: `--import ./x`,
 * `-r x`), unless it is an absolute path outside the repository. Inline code (`-e`, `-c`) counts
 * as the repository's: it may load anything from there. Python's `-m` names a module, which
 * PYTHONSAFEPATH (set for every server) keeps from the working directory. A false positive costs
 * only the task's files: the server then sees the user's checkout instead of the task worktree.
 */
import { basename, isAbsolute, normalize, resolve } from 'node:path';

/** Programs that run a script or module named by their arguments. */
const INTERPRETER =
  /^(?:node(?:js)?|deno|bun|tsx|ts-node|python(?:\d+(?:\.\d+)?)?|pypy\d*|ruby|perl|php|lua(?:jit)?|Rscript|java|sh|bash|dash|zsh|ksh|fish)$/;
/** Programs that resolve and run packages or builds from their working directory. */
const LAUNCHER =
  /^(?:npx|pnpx|pnpm|yarn|npm|bunx|corepack|uvx|uv|pipx|poetry|pipenv|pdm|hatch|rye|make|just|cargo|go|dotnet|mvn|gradle)$/;
/** Options whose argument is code to run, for the interpreters above: it may load anything. */
const INLINE_CODE = new Set(['-e', '--eval', '-p', '--print', '-c', '--command']);
/** Options whose argument is a module, a path to load code from, or a search path. */
const CODE_PATH_OPTIONS = new Set([
  '-r',
  '--require',
  '--import',
  '--loader',
  '--experimental-loader',
  '-I',
  '-cp',
  '-classpath',
  '--class-path',
]);

const inside = (path: string, root: string): boolean => path === root || path.startsWith(`${root}/`);

/** Whether `path`, as a server's command line names it, is in the repository (relative names are). */
function inRepository(path: string, repository: string): boolean {
  if (!isAbsolute(path)) return true;
  return inside(normalize(path), normalize(resolve(repository)));
}

/** The interpreter's arguments up to and including its script; inline code marks the whole line. */
function interpreterLoadsFromRepository(args: readonly string[], repository: string): boolean {
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index] ?? '';
    if (INLINE_CODE.has(arg)) return true;
    if (arg === '-m') {
      index += 1; // a module name; PYTHONSAFEPATH keeps it from the working directory
      continue;
    }
    if (CODE_PATH_OPTIONS.has(arg)) {
      index += 1;
      if (inRepository(args[index] ?? '', repository)) return true; // a bare module name resolves from there too
      continue;
    }
    if (arg.startsWith('-')) {
      const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : '';
      if (/[/.]/.test(value) && inRepository(value, repository)) return true;
      continue;
    }
    // The first positional argument is the script (or a module path an option took): code.
    return inRepository(arg, repository);
  }
  return false;
}

/** Whether a stdio server with this command line may load code from its working directory. */
export function loadsCodeFromRepository(command: string, args: readonly string[], repository: string): boolean {
  if (command.includes('/') && inRepository(command, repository)) return true;
  const program = basename(command);
  if (LAUNCHER.test(program)) return true;
  if (INTERPRETER.test(program)) return interpreterLoadsFromRepository(args, repository);
  return false;
}
