/**
 * Content-addressed artifact store: diffs, command logs, transcripts. An
 * artifact's name is the SHA-256 of its bytes (`artifacts/ab/cdef…`), it is
 * written temp + fsync + rename (+ directory fsync), and every read checks
 * the bytes against the name. Events reference artifacts by hash, so a
 * replaced artifact is caught by `inspect`.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync } from 'node:fs';
import { open, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { err, type Hash32, isHash32, ok, type Result } from '@crustcore/kernel';
import { syncDirectory } from './durable-file.js';
import { nodeSha256, type Sha256, toHex } from './sha256.js';

export const DEFAULT_MAX_ARTIFACT_BYTES = 256 * 1024 * 1024;

export type ArtifactError =
  | { readonly _tag: 'ArtifactBadName'; readonly hash: string }
  | { readonly _tag: 'ArtifactMissing'; readonly hash: string }
  | { readonly _tag: 'ArtifactCorrupt'; readonly hash: string; readonly actualHash: string }
  | { readonly _tag: 'ArtifactTooLarge'; readonly hash: string; readonly sizeBytes: number; readonly maxBytes: number };

export interface ArtifactRef {
  readonly hash: Hash32;
  readonly sizeBytes: number;
}

export class ArtifactStore {
  readonly root: string;
  readonly #sha256: Sha256;
  readonly #maxBytes: number;

  constructor(root: string, options: { readonly sha256?: Sha256; readonly maxArtifactBytes?: number } = {}) {
    this.root = root;
    this.#sha256 = options.sha256 ?? nodeSha256;
    this.#maxBytes = options.maxArtifactBytes ?? DEFAULT_MAX_ARTIFACT_BYTES;
  }

  /** `artifacts/ab/cdef…` for hash `abcdef…`. */
  pathOf(hash: Hash32): string {
    return join(this.root, hash.slice(0, 2), hash.slice(2));
  }

  /** Stores bytes under their hash. Idempotent: an intact existing copy is kept. */
  async put(bytes: Uint8Array): Promise<Result<ArtifactError, ArtifactRef>> {
    const hash = toHex(this.#sha256(bytes)) as Hash32;
    if (bytes.length > this.#maxBytes) {
      return err({ _tag: 'ArtifactTooLarge', hash, sizeBytes: bytes.length, maxBytes: this.#maxBytes });
    }
    if (this.check(hash)._tag === 'Right') return ok({ hash, sizeBytes: bytes.length });
    const shard = join(this.root, hash.slice(0, 2));
    const temporary = join(this.root, 'tmp');
    const shardExisted = await exists(shard);
    mkdirSync(shard, { recursive: true });
    mkdirSync(temporary, { recursive: true });
    if (!shardExisted) syncDirectory(this.root);
    const tempPath = join(temporary, `${hash.slice(0, 16)}.${randomBytes(6).toString('hex')}`);
    const handle = await open(tempPath, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o444);
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } catch (error) {
      await handle.close();
      await unlink(tempPath).catch(() => undefined);
      throw error;
    }
    await handle.close();
    await rename(tempPath, this.pathOf(hash));
    syncDirectory(shard);
    return ok({ hash, sizeBytes: bytes.length });
  }

  /** Reads an artifact and checks its bytes against its name. */
  read(hash: string): Result<ArtifactError, Uint8Array> {
    const opened = this.#openChecked(hash);
    if (opened._tag === 'Left') return opened;
    const { fd, size } = opened.right;
    try {
      const bytes = new Uint8Array(size);
      let done = 0;
      while (done < size) {
        const read = readSync(fd, bytes, done, size - done, done);
        if (read === 0) break;
        done += read;
      }
      const actual = toHex(this.#sha256(bytes.subarray(0, done)));
      if (done !== size || actual !== hash) return err({ _tag: 'ArtifactCorrupt', hash, actualHash: actual });
      return ok(bytes);
    } finally {
      closeSync(fd);
    }
  }

  /** Checks an artifact is present and intact without keeping its bytes. */
  check(hash: string): Result<ArtifactError, ArtifactRef> {
    const read = this.read(hash);
    return read._tag === 'Left' ? read : ok({ hash: hash as Hash32, sizeBytes: read.right.length });
  }

  #openChecked(hash: string): Result<ArtifactError, { fd: number; size: number }> {
    if (!isHash32(hash)) return err({ _tag: 'ArtifactBadName', hash: hash.slice(0, 80) });
    let fd: number;
    try {
      fd = openSync(this.pathOf(hash), constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch {
      return err({ _tag: 'ArtifactMissing', hash });
    }
    const info = fstatSync(fd);
    if (!info.isFile()) {
      closeSync(fd);
      return err({ _tag: 'ArtifactMissing', hash });
    }
    if (info.size > this.#maxBytes) {
      closeSync(fd);
      return err({ _tag: 'ArtifactTooLarge', hash, sizeBytes: info.size, maxBytes: this.#maxBytes });
    }
    return ok({ fd, size: info.size });
  }

  /** Stores `bytes` only when they are too big (or not text) to inline; see outputHandle. */
  async putOutput(bytes: Uint8Array, maxInlineBytes: number): Promise<Result<ArtifactError, ToolOutput>> {
    const output = outputHandle(bytes, maxInlineBytes, { sha256: this.#sha256 });
    if (output._tag === 'Inline') return ok(output);
    const stored = await this.put(bytes);
    return stored._tag === 'Left' ? stored : ok(output);
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

export function describeArtifactError(error: ArtifactError): string {
  switch (error._tag) {
    case 'ArtifactBadName':
      return `"${error.hash}" is not a SHA-256 hex name`;
    case 'ArtifactMissing':
      return `artifact ${error.hash} is missing`;
    case 'ArtifactCorrupt':
      return `artifact ${error.hash} holds other bytes (they hash to ${error.actualHash}): replaced or corrupted`;
    case 'ArtifactTooLarge':
      return `artifact ${error.hash} is ${error.sizeBytes} bytes, over the ${error.maxBytes}-byte bound`;
  }
}

// ── output handles ───────────────────────────────────────────────────────────

/**
 * Tool output as it goes into the log: inline when small and valid UTF-8,
 * otherwise a handle (hash, size, a short head and tail preview) to an
 * artifact, so the log never carries megabytes. JSON-safe as is.
 */
export type ToolOutput =
  | { readonly _tag: 'Inline'; readonly text: string; readonly sizeBytes: number }
  | {
      readonly _tag: 'Handle';
      readonly artifact: Hash32;
      readonly sizeBytes: number;
      readonly head: string;
      readonly tail: string;
    };

const strictText = new TextDecoder('utf-8', { fatal: true });
const lenientText = new TextDecoder('utf-8', { fatal: false });

export const DEFAULT_PREVIEW_BYTES = 512;

export function outputHandle(
  bytes: Uint8Array,
  maxInlineBytes: number,
  options: { readonly previewBytes?: number; readonly sha256?: Sha256 } = {},
): ToolOutput {
  if (bytes.length <= maxInlineBytes) {
    try {
      return { _tag: 'Inline', text: strictText.decode(bytes), sizeBytes: bytes.length };
    } catch {
      // Not UTF-8: inlining would change the bytes, so store them instead.
    }
  }
  const previewBytes = Math.max(
    0,
    Math.min(options.previewBytes ?? DEFAULT_PREVIEW_BYTES, Math.floor(maxInlineBytes / 2), bytes.length),
  );
  const sha256 = options.sha256 ?? nodeSha256;
  return {
    _tag: 'Handle',
    artifact: toHex(sha256(bytes)) as Hash32,
    sizeBytes: bytes.length,
    // A cut may split a character: the lenient decoder shows U+FFFD there.
    head: lenientText.decode(bytes.subarray(0, previewBytes)),
    tail: lenientText.decode(bytes.subarray(bytes.length - previewBytes)),
  };
}
