/**
 * The Node binary that runs CrustCore's own helper scripts (the setup bridge, the git credential
 * helper) and that sandboxed tests may use. Usually this process's own binary. The single
 * executable (docs/single-executable.md) is a Node binary too, but one that only ever runs the
 * CLI it carries: handed a script, it would run the CLI with the script's path as a command. So
 * there the Node of the user's PATH is used, resolved once; none means null and the step that
 * needs one says so.
 */
import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

let resolved: string | null | undefined;

/**
 * `CRUSTCORE_SEA` is set by the single executable's build (scripts/sea.mjs) and is false in nano's,
 * whose bundler then drops the PATH search. A build-time flag, not `node:sea`'s isSea(): bundlers
 * rewrite that prefix-only module's name, and the ES module build then fails to load.
 */
type Build = { readonly CRUSTCORE_SEA?: boolean };

/** Real path of a Node binary that runs scripts, or null (the single executable, no node on PATH). */
export function scriptNodeBinary(env: NodeJS.ProcessEnv = process.env): string | null {
  if (resolved !== undefined) return resolved;
  resolved = (globalThis as Build).CRUSTCORE_SEA === true ? nodeOnPath(env.PATH ?? '') : realpathSync(process.execPath);
  return resolved;
}

function nodeOnPath(path: string): string | null {
  for (const directory of path.split(delimiter)) {
    // Only absolute entries: a relative one would name a different binary in every directory.
    if (!isAbsolute(directory)) continue;
    const candidate = join(directory, 'node');
    try {
      accessSync(candidate, constants.X_OK);
      return realpathSync(candidate);
    } catch {
      // Not here; try the next entry.
    }
  }
  return null;
}
