/**
 * A worktree root: an absolute, real (symlink-free), existing directory,
 * remembered by path AND by device/inode so a root that was replaced after
 * it was opened is noticed instead of silently followed.
 */
import { realpathSync, statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { err, ok, type Result } from '@crustcore/kernel';
import { errnoCode, type PathError, pathError, pathErrorFromErrno } from './errors.js';

const MAX_ROOT_PATH_BYTES = 2048;

export class WorktreeRoot {
  readonly #path: string;
  readonly #device: number;
  readonly #inode: number;

  private constructor(path: string, device: number, inode: number) {
    this.#path = path;
    this.#device = device;
    this.#inode = inode;
  }

  /**
   * Opens `path` as a root. It must be absolute and name an existing
   * directory; symlinks in it are resolved once, here, by the host.
   */
  static open(path: string): Result<PathError, WorktreeRoot> {
    if (typeof path !== 'string' || path.length === 0) return err(pathError('PathEmpty', '', 'root path is empty'));
    if (path.includes('\u0000')) return err(pathError('PathNulByte', path, 'root path contains a NUL byte'));
    if (Buffer.byteLength(path) > MAX_ROOT_PATH_BYTES) return err(pathError('PathTooLong', path, 'root path too long'));
    if (!isAbsolute(path)) return err(pathError('PathAbsolute', path, 'a root must be an absolute path'));
    let real: string;
    try {
      real = realpathSync.native(path);
    } catch (error) {
      return err(pathErrorFromErrno(error, path, 'opening root'));
    }
    try {
      const stats = statSync(real);
      if (!stats.isDirectory()) return err(pathError('NotADirectory', path, 'a root must be a directory'));
      return ok(new WorktreeRoot(real, stats.dev, stats.ino));
    } catch (error) {
      return err(pathError('FsFailure', path, `cannot stat root: ${errnoCode(error)}`, errnoCode(error)));
    }
  }

  /** The real absolute path, without a trailing slash (except for `/` itself). */
  get path(): string {
    return this.#path;
  }

  /** Device and inode of the root directory when it was opened. */
  get identity(): { readonly device: number; readonly inode: number } {
    return { device: this.#device, inode: this.#inode };
  }

  /** True when `device`/`inode` name the same directory this root was opened on. */
  matches(device: number, inode: number): boolean {
    return device === this.#device && inode === this.#inode;
  }

  /** Same directory (path and identity). Two `open` calls on one directory are equal. */
  equals(other: WorktreeRoot): boolean {
    return other.#path === this.#path && other.#device === this.#device && other.#inode === this.#inode;
  }

  /** Absolute path of a relative (already normalized) path under this root. */
  join(relative: string): string {
    if (relative === '') return this.#path;
    return this.#path === '/' ? `/${relative}` : `${this.#path}/${relative}`;
  }

  /** The normalized relative path of `absolute` when it lies inside this root, else null. */
  relativeOf(absolute: string): string | null {
    if (absolute === this.#path) return '';
    const prefix = this.#path === '/' ? '/' : `${this.#path}/`;
    return absolute.startsWith(prefix) ? absolute.slice(prefix.length) : null;
  }

  toString(): string {
    return `WorktreeRoot(${this.#path})`;
  }
}
