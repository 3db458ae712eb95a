/**
 * Where the config files are and how they are read.
 *
 *  - user: `$XDG_CONFIG_HOME/crustcore/config.json` (an absolute
 *    XDG_CONFIG_HOME only, as the XDG spec says), else
 *    `$HOME/.config/crustcore/config.json`. The user's own file: it may be a
 *    symlink into their dotfiles.
 *  - project: `<repository root>/.crustcore/config.json`. It comes with the
 *    repository, so it is read like any hostile input: the `.crustcore`
 *    directory and the file must be real (no symlink, so it cannot point
 *    outside the repository), the file a regular file (a FIFO would block
 *    the CLI forever, a device could be endless), at most 64 KiB.
 *
 * Every open is non-blocking and checked with fstat before a byte is read.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { type ConfigDocument, ConfigFileError, parseDocument } from './document.js';

export const MAX_USER_FILE_BYTES = 1024 * 1024;
export const MAX_PROJECT_FILE_BYTES = 64 * 1024;

export function userConfigPath(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg !== undefined && xdg !== '' && isAbsolute(xdg)) return join(xdg, 'crustcore', 'config.json');
  const home = env.HOME !== undefined && env.HOME !== '' ? env.HOME : homedir();
  return join(home, '.config', 'crustcore', 'config.json');
}

export const projectConfigDir = (root: string): string => join(root, '.crustcore');
export const projectConfigPath = (root: string): string => join(projectConfigDir(root), 'config.json');

function kindOf(stats: Stats): string {
  if (stats.isSymbolicLink()) return 'a symbolic link';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  if (stats.isDirectory()) return 'a directory';
  return 'not a regular file';
}

const lstatOrNull = (path: string): Stats | null => {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
};

/** Reads at most `limit` bytes of a regular file opened without blocking; null when absent. */
function readBounded(path: string, limit: number, followLinks: boolean, fix: string): string | null {
  const flags = constants.O_RDONLY | constants.O_NONBLOCK | (followLinks ? 0 : constants.O_NOFOLLOW);
  let fd: number;
  try {
    fd = openSync(path, flags);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') throw new ConfigFileError(path, null, 'is a symbolic link', fix);
    throw new ConfigFileError(path, null, `cannot be read (${code ?? (error as Error).message})`, fix);
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new ConfigFileError(path, null, `is ${kindOf(stats)}, not a regular file`, fix);
    if (stats.size > limit)
      throw new ConfigFileError(path, null, `is ${stats.size} bytes (the limit is ${limit})`, fix);
    const buffer = Buffer.alloc(limit + 1);
    let length = 0;
    while (length <= limit) {
      const read = readSync(fd, buffer, length, limit + 1 - length, null);
      if (read === 0) break;
      length += read;
    }
    // The file grew after fstat: still bounded, still refused.
    if (length > limit) throw new ConfigFileError(path, null, `is over the limit of ${limit} bytes`, fix);
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

export function readUserConfig(env: NodeJS.ProcessEnv): {
  readonly path: string;
  readonly document: ConfigDocument | null;
} {
  const path = userConfigPath(env);
  const text = readBounded(path, MAX_USER_FILE_BYTES, true, 'Replace it with a JSON file, or remove it.');
  return { path, document: text === null ? null : parseDocument(path, text, 'user') };
}

const PROJECT_FIX =
  'A repository config must be a regular file at .crustcore/config.json inside the repository (no symlinks, at most 64 KiB). Remove or replace it.';

export function readProjectConfig(root: string): { readonly path: string; readonly document: ConfigDocument | null } {
  const dir = projectConfigDir(root);
  const path = projectConfigPath(root);
  const dirStats = lstatOrNull(dir);
  if (dirStats === null) return { path, document: null };
  if (!dirStats.isDirectory()) {
    // A .crustcore that is a symlink could point anywhere outside the repository.
    if (dirStats.isSymbolicLink()) throw new ConfigFileError(dir, null, 'is a symbolic link', PROJECT_FIX);
    return { path, document: null };
  }
  const text = readBounded(path, MAX_PROJECT_FILE_BYTES, false, PROJECT_FIX);
  return { path, document: text === null ? null : parseDocument(path, text, 'project') };
}
