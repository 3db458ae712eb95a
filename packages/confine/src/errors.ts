/**
 * Every refusal in this package is a value with a stable `_tag`; nothing here
 * throws for bad input. One shape for all path refusals keeps callers' switch
 * statements short and lets the kernel log them without knowing each variant.
 */

/** Why a path (or a file operation on a confined path) was refused. */
export type PathRefusal =
  /** The input was empty where a file is needed. */
  | 'PathEmpty'
  /** The input contained a NUL byte (the OS would silently cut it there). */
  | 'PathNulByte'
  /** Longer than the byte, component or depth bound. */
  | 'PathTooLong'
  /** Absolute, and no read-only root covers it (writes never take absolute paths). */
  | 'PathAbsolute'
  /** `..` climbs above the root. */
  | 'PathEscape'
  /** A symlink at some component leads outside the root. */
  | 'SymlinkEscape'
  /** Too many symlinks (ELOOP). */
  | 'SymlinkLoop'
  /** A symlink whose target does not exist sits where a new file would go. */
  | 'DanglingSymlink'
  /** The path (or one of its directories) does not exist. */
  | 'NotFound'
  /** A non-directory sits where a directory is needed. */
  | 'NotADirectory'
  /** A directory sits where a file is needed. */
  | 'IsDirectory'
  /** The file has other hard links; writing would change what they name too. */
  | 'HardLinkRejected'
  /** A FIFO, socket or device: reading could block, writing could reach hardware. */
  | 'SpecialFileRejected'
  /** Git metadata (`.git/…`): readable, never written by tools. */
  | 'ProtectedPath'
  /** The confined path belongs to a different root than the capability. */
  | 'RootMismatch'
  /** The root directory was replaced since it was opened. */
  | 'RootChanged'
  /** The file system changed under an operation (symlink swap, moved directory). */
  | 'RaceDetected'
  /** An unexpected OS error (EACCES, EIO, …); `code` says which. */
  | 'FsFailure';

export interface PathError {
  readonly _tag: PathRefusal;
  /** The path as the caller gave it (bounded to 512 characters). */
  readonly path: string;
  readonly message: string;
  /** The errno code when the OS reported one. */
  readonly code?: string;
}

const MAX_ECHOED_PATH_CHARS = 512;

/** Builds a `PathError`; the echoed path is bounded so a huge input stays out of logs. */
export function pathError(tag: PathRefusal, path: string, message: string, code?: string): PathError {
  const echoed = path.length > MAX_ECHOED_PATH_CHARS ? `${path.slice(0, MAX_ECHOED_PATH_CHARS)}…` : path;
  return code === undefined ? { _tag: tag, path: echoed, message } : { _tag: tag, path: echoed, message, code };
}

/** The errno code of a caught fs error, or 'UNKNOWN'. */
export function errnoCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : 'UNKNOWN';
}

/** Maps an errno from a lookup to the refusal a caller can act on. */
export function pathErrorFromErrno(error: unknown, path: string, doing: string): PathError {
  const code = errnoCode(error);
  switch (code) {
    case 'ENOENT':
      return pathError('NotFound', path, `${doing}: no such file or directory`, code);
    case 'ENOTDIR':
      return pathError('NotADirectory', path, `${doing}: a component is not a directory`, code);
    case 'ELOOP':
      return pathError('SymlinkLoop', path, `${doing}: too many levels of symbolic links`, code);
    case 'EISDIR':
      return pathError('IsDirectory', path, `${doing}: is a directory`, code);
    case 'ENAMETOOLONG':
      return pathError('PathTooLong', path, `${doing}: name too long`, code);
    default:
      return pathError('FsFailure', path, `${doing}: ${code}`, code);
  }
}
