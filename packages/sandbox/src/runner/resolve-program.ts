/**
 * `argv[0]` to an executable path, the way execvp finds it, before anything
 * is spawned. The launcher then `exec`s that exact path, and a missing or
 * non-executable program is a typed start error instead of a launcher exit.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';

/** PATH when the child's environment has none (execvp's default). */
const DEFAULT_SEARCH_PATH = '/usr/bin:/bin';

export type ProgramLookup =
  | { readonly _tag: 'Found'; readonly path: string }
  | { readonly _tag: 'Missing'; readonly code: 'ENOENT' | 'EACCES' };

/** What a candidate path is: an executable regular file, present but not runnable, or absent. */
function probe(path: string): 'runnable' | 'denied' | 'absent' {
  let isFile: boolean;
  try {
    isFile = statSync(path).isFile();
  } catch {
    return 'absent';
  }
  if (!isFile) return 'denied';
  try {
    accessSync(path, constants.X_OK);
    return 'runnable';
  } catch {
    return 'denied';
  }
}

/**
 * A name with a slash is taken relative to `cwd`; a bare name is searched
 * on `searchPath` (empty entries mean `cwd`, as for execvp). EACCES when
 * some candidate exists but none can run, else ENOENT.
 */
export function resolveProgram(program: string, searchPath: string | undefined, cwd: string): ProgramLookup {
  if (program.includes('/')) {
    const path = isAbsolute(program) ? program : resolve(cwd, program);
    const state = probe(path);
    if (state === 'runnable') return { _tag: 'Found', path };
    return { _tag: 'Missing', code: state === 'denied' ? 'EACCES' : 'ENOENT' };
  }
  let denied = false;
  for (const directory of (searchPath ?? DEFAULT_SEARCH_PATH).split(':')) {
    const candidate = join(directory === '' ? cwd : resolve(cwd, directory), program);
    const state = probe(candidate);
    if (state === 'runnable') return { _tag: 'Found', path: candidate };
    if (state === 'denied') denied = true;
  }
  return { _tag: 'Missing', code: denied ? 'EACCES' : 'ENOENT' };
}
