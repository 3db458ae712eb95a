/**
 * Where a stdio server's code comes from. The gateway starts a server with the task worktree as its
 * working directory — and the worktree is what the native agent or a worker writes. A server whose
 * code is read from that directory (a script next to it, a module an interpreter resolves from it,
 * a package a launcher installs there) would run code the model wrote, with the server's
 * credential and read paths; started lazily, or reading lazily, it would do so whenever the model
 * first asked for it. So such a server never runs on the task worktree: it runs on the user's own
 * checkout, read-only (client/server-session.ts).
 *
 * The test is on the record's command line and environment, which a person approved, never on
 * files the model can change. It is an allowlist: a server keeps the task worktree only when its
 * line shows where its code is and that place is outside the repository. Everything not understood
 * counts as the repository's — an option of an interpreter we do not know to be inert (it may take
 * a value, or be code: `--title /x ./srv.js`, `-pe`, `-ec`), a launcher, a wrapper naming an
 * interpreter or a relative file (`env node srv.mjs`), a variable pointing lookups at a relative
 * place or into the checkout (`PATH=.:…`, `PYTHONPATH=src`, `HOME=.`). A false positive costs only
 * the task's files: the server then sees the user's checkout instead of the task worktree.
 */
import { realpathSync } from 'node:fs';
import { basename, isAbsolute, normalize, resolve } from 'node:path';
import { defaultSandboxPath, isDangerousEnvName, isInside, resolveProgram } from '@crustcore/sandbox';

/** Programs that run a script or module named by their arguments. */
const INTERPRETER =
  /^(?:node(?:js)?|deno|bun|tsx|ts-node(?:-esm)?|babel-node|vite-node|jiti|esno|zx|coffee|python(?:\d+(?:\.\d+)?)?|ipython\d*|pypy\d*|ruby|jruby|perl|php|lua(?:jit)?|Rscript|julia|java|jshell|groovy|kotlin|scala|elixir|erl|escript|guile|racket|swipl|tclsh|wish|g?awk|pwsh|sh|bash|dash|zsh|ksh|mksh|fish|busybox)$/i;
/** Programs that resolve and run packages, builds or settings from their working directory. */
const LAUNCHER =
  /^(?:npx|pnpx|pnpm|yarn|npm|bunx|corepack|uvx|uv|pipx|poetry|pipenv|pdm|hatch|rye|pixi|conda|mamba|micromamba|tox|nox|invoke|make|just|task|cargo|go|dotnet|mvn|gradle|sbt|lein|mix|bazel|bazelisk|bundle|bundler|rake|gem|composer|direnv|mise|rtx|asdf|nix|nix-shell|devbox|dotenv|dotenvx|env-cmd|foreman|honcho|turbo|nx)$/i;
/** Python's `-m` names a module: `PYTHONSAFEPATH=1`, which the session sets last, keeps it from the working directory. */
const PYTHON = /^(?:python(?:\d+(?:\.\d+)?)?|pypy\d*)$/i;
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
/**
 * Interpreter options known to load nothing and to take no separate value (`--name=value` forms
 * name inert settings). Any other option may be code (`-e`, `-pe`, `-ec`, `-cCODE`), take a path
 * (`--env-file`), or take a value the script would hide behind: it counts as the repository's.
 */
const INERT_OPTIONS = new Set([
  '--no-warnings',
  '--no-deprecation',
  '--enable-source-maps',
  '--trace-warnings',
  '--trace-uncaught',
  '--experimental-strip-types',
  '--experimental-vm-modules',
  '--expose-gc',
  '--max-old-space-size',
  '--max-semi-space-size',
  '--stack-size',
  '--input-type',
  '--unhandled-rejections',
  '--experimental-specifier-resolution',
]);
/** Variables that are lists of places code is searched in. */
const CODE_SEARCH_LISTS =
  /^(?:PATH|NODE_PATH|PYTHONPATH|PYTHONUSERBASE|CLASSPATH|PERL5LIB|PERLLIB|RUBYLIB|GEM_PATH|GEM_HOME|LUA_PATH|LUA_CPATH|R_LIBS(?:_USER|_SITE)?|JULIA_LOAD_PATH|ERL_LIBS|GUILE_LOAD_PATH|TCLLIBPATH|DENO_DIR)$/;
/** Python's value-less flags. Only Python's: the same letters are code or a search elsewhere (perl -E, -S). */
const PYTHON_INERT_FLAGS = new Set(['-u', '-B', '-E', '-s', '-S', '-O', '-OO', '-q', '-P']);

/** Whether `path`, as a server's command line names it, is in the repository (relative names are). */
function inRepository(path: string, repository: string): boolean {
  if (!isAbsolute(path)) return true;
  return isInside(normalize(path), normalize(resolve(repository)));
}

/** A word that names a file or directory relative to the working directory (`./x`, `a/b`, `srv.mjs`, `.env`). */
function relativePathLike(word: string): boolean {
  if (word === '' || isAbsolute(word) || /^[A-Za-z][A-Za-z0-9+.-]*:/.test(word)) return false;
  return word.startsWith('.') || word.includes('/') || /\.[A-Za-z0-9]{1,8}$/.test(word);
}

/** Whether a value names a place under the working directory or in the checkout (a search path, a file). */
function pointsIntoRepository(value: string, repository: string): boolean {
  return value
    .split(/[\s:;,=@]+/)
    .some((word) => relativePathLike(word) || (isAbsolute(word) && inRepository(word, repository)));
}

/**
 * Whether the record's variables steer a lookup at the working directory or the checkout. Variables
 * holding search paths (`…PATH`, `…LIB`, `…HOME`, `…_DIR`) count with any entry that is relative,
 * even a bare word (`PYTHONPATH=src`), or empty (the current directory); a code search list
 * (`NODE_PATH`, `PYTHONPATH`…) also with one in the checkout; any variable counts with a relative
 * file (`LUA_INIT=@./x.lua`, `BUNDLE_GEMFILE=./Gemfile`). An absolute path in the checkout elsewhere
 * is data the server reads or writes (a marker, `MEMORY_FILE_PATH`), not a lookup.
 */
function environmentLoadsFromRepository(env: Readonly<Record<string, string>>, repository: string): boolean {
  return Object.entries(env).some(([name, value]) => {
    if (value.split(/[\s:;,=@]+/).some(relativePathLike)) return true;
    if (!/(?:PATH|LIBS?|HOME|_DIRS?|_ROOT)$/i.test(name)) return false;
    const entries = value.split(':');
    if (entries.some((entry) => entry === '' || !isAbsolute(entry))) return true;
    // Into the checkout only where the variable is a list code is searched in (MEMORY_FILE_PATH is data).
    return CODE_SEARCH_LISTS.test(name) && entries.some((entry) => inRepository(entry, repository));
  });
}

/** `--name=value`: an inert setting, or a code path outside the repository; else the repository's. */
function valuedOptionLoads(arg: string, repository: string): boolean {
  const name = arg.slice(0, arg.indexOf('='));
  const value = arg.slice(arg.indexOf('=') + 1);
  if (CODE_PATH_OPTIONS.has(name)) return inRepository(value, repository);
  return !INERT_OPTIONS.has(name) || pointsIntoRepository(value, repository);
}

/** The interpreter's arguments up to and including its script: everything not known inert counts. */
function interpreterLoadsFromRepository(program: string, args: readonly string[], repository: string): boolean {
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index] ?? '';
    if (arg === '--') return inRepository(args[index + 1] ?? '.', repository);
    if (arg === '-m' && PYTHON.test(program)) return false; // a module name; the rest are its arguments
    if (arg === '-jar') return inRepository(args[index + 1] ?? '.', repository); // the archive is the code
    if (CODE_PATH_OPTIONS.has(arg)) {
      index += 1;
      if (inRepository(args[index] ?? '', repository)) return true; // a bare module name resolves from there too
      continue;
    }
    if (arg.startsWith('-') && arg.includes('=')) {
      if (valuedOptionLoads(arg, repository)) return true;
      continue;
    }
    if (arg.startsWith('-')) {
      const inert = INERT_OPTIONS.has(arg) || (PYTHON.test(program) && PYTHON_INERT_FLAGS.has(arg));
      if (!inert) return true; // inline code, a value we cannot place, or a loader
      continue;
    }
    // The first positional argument is the script: code.
    return inRepository(arg, repository);
  }
  return true; // no script: the program reads its code from stdin or its directory
}

/**
 * A program that is neither an interpreter nor a launcher may still be a wrapper (`env`, `timeout`,
 * `nice`, a script of the user's) that runs one: every word of its arguments naming an interpreter
 * or a launcher is checked as a command line of its own, and a relative file counts.
 */
function wrapperLoadsFromRepository(args: readonly string[], repository: string): boolean {
  for (let index = 0; index < args.length; index += 1) {
    const words = (args[index] ?? '').split(/\s+/).filter((word) => word !== '');
    for (let at = 0; at < words.length; at += 1) {
      const word = words[at] as string;
      if (relativePathLike(word)) return true;
      // `env NODE_OPTIONS=--import=x node …`: a variable the wrapper sets is the record's environment too.
      const assignment = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(word);
      if (
        assignment !== null &&
        (isDangerousEnvName(assignment[1] as string) ||
          environmentLoadsFromRepository({ [assignment[1] as string]: assignment[2] as string }, repository))
      )
        return true;
      const name = spelled(basename(word));
      if (!INTERPRETER.test(name) && !LAUNCHER.test(name)) continue;
      const rest = [...words.slice(at + 1), ...args.slice(index + 1)];
      return loadsCodeFromRepository(word, rest, repository);
    }
  }
  return false;
}

/** A program name as the lists spell it: any case, without a version suffix (`Node`, `node20`, `python3.12`). */
const spelled = (name: string): string => name.toLowerCase().replace(/(?:[-_.]?\d+)+$/, '');

/** Where `command` resolves on the host, through its symlinks: itself when a path, else on PATH as exec would. */
function hostPathOf(command: string, env: Readonly<Record<string, string>>): string | null {
  const found = resolveProgram(command, env.PATH ?? defaultSandboxPath(), '/');
  if (found._tag === 'Missing') return null;
  try {
    return realpathSync(found.path);
  } catch {
    return null; // gone since: no other name to go by
  }
}

/**
 * The names a program goes by: its own and, through symlinks, its target's (`/usr/local/bin/js` →
 * node). An interpreter under another name or spelling is still an interpreter.
 */
function programNames(command: string, env: Readonly<Record<string, string>>): string[] {
  const target = hostPathOf(command, env);
  return [basename(command), ...(target === null ? [] : [basename(target)])].map(spelled);
}

/** Whether a stdio server with this command line and environment may load code from its working directory. */
export function loadsCodeFromRepository(
  command: string,
  args: readonly string[],
  repository: string,
  env: Readonly<Record<string, string>> = {},
): boolean {
  if (environmentLoadsFromRepository(env, repository)) return true;
  if (command.includes('/') && inRepository(command, repository)) return true;
  const names = programNames(command, env);
  if (names.some((name) => LAUNCHER.test(name))) return true;
  const interpreter = names.find((name) => INTERPRETER.test(name));
  if (interpreter !== undefined) return interpreterLoadsFromRepository(interpreter, args, repository);
  return wrapperLoadsFromRepository(args, repository);
}
