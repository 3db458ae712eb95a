/**
 * The archive's bytes: gzip over a header line, the manifest as JSON, and the
 * file contents one after another in manifest order. One self-describing file
 * with no tar semantics to trip over (no hard links, no device nodes, no
 * ownership): what it can express is exactly what restore writes.
 */
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { type BackupEntry, checkEntries, decodeManifest, describeProblem, type Manifest } from './manifest.js';

const MAGIC = 'crustcore-backup 1\n';
/** Restore holds the archive in memory; a larger one is refused with the reason, not an out-of-memory crash. */
export const MAX_ARCHIVE_BYTES = 2 * 1024 ** 3;
const MAX_MANIFEST_BYTES = 256 * 1024 ** 2;

export const sha256Hex = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

export function encodeArchive(manifest: Manifest, contents: readonly Uint8Array[]): Buffer {
  const json = Buffer.from(JSON.stringify(manifest));
  return gzipSync(Buffer.concat([Buffer.from(`${MAGIC}${json.length}\n`), json, ...contents]));
}

export type ArchiveError =
  | { readonly _tag: 'NotAnArchive'; readonly why: string }
  | { readonly _tag: 'UnsafeEntries'; readonly problems: readonly string[] }
  | { readonly _tag: 'ChecksumMismatch'; readonly path: string }
  | { readonly _tag: 'SizeMismatch'; readonly why: string };

export interface VerifiedArchive {
  readonly manifest: Manifest;
  readonly entries: readonly BackupEntry[];
  /** The verified bytes of every file entry, by path. */
  readonly files: ReadonlyMap<string, Buffer>;
}

type Decoded<T> =
  | { readonly _tag: 'Left'; readonly left: ArchiveError }
  | { readonly _tag: 'Right'; readonly right: T };
const fail = (left: ArchiveError): Decoded<never> => ({ _tag: 'Left', left });

function unpack(bytes: Uint8Array): Decoded<{ manifest: unknown; data: Buffer }> {
  let raw: Buffer;
  try {
    raw = gunzipSync(bytes, { maxOutputLength: MAX_ARCHIVE_BYTES });
  } catch (error) {
    return fail({
      _tag: 'NotAnArchive',
      why: `not a gzip stream, or over ${MAX_ARCHIVE_BYTES} bytes (${(error as Error).message})`,
    });
  }
  if (raw.subarray(0, MAGIC.length).toString('latin1') !== MAGIC)
    return fail({ _tag: 'NotAnArchive', why: 'no crustcore-backup header (made by crustcore backup?)' });
  const lineEnd = raw.indexOf(10, MAGIC.length);
  const length = Number(raw.subarray(MAGIC.length, lineEnd).toString('latin1'));
  if (lineEnd < 0 || !Number.isSafeInteger(length) || length <= 0 || length > MAX_MANIFEST_BYTES)
    return fail({ _tag: 'NotAnArchive', why: 'the manifest length is missing or not a number' });
  const start = lineEnd + 1;
  try {
    const manifest: unknown = JSON.parse(raw.subarray(start, start + length).toString('utf8'));
    return { _tag: 'Right', right: { manifest, data: raw.subarray(start + length) } };
  } catch {
    return fail({ _tag: 'NotAnArchive', why: 'the manifest is not JSON' });
  }
}

/** Decodes and verifies the whole archive — every path, every size, every SHA-256 — before restore writes a byte. */
export function verifyArchive(bytes: Uint8Array): Decoded<VerifiedArchive> {
  const unpacked = unpack(bytes);
  if (unpacked._tag === 'Left') return unpacked;
  const manifest = decodeManifest(unpacked.right.manifest);
  if (manifest._tag === 'Left') return fail({ _tag: 'NotAnArchive', why: manifest.left });
  const checked = checkEntries(manifest.right.entries);
  if (checked._tag === 'Left') return fail({ _tag: 'UnsafeEntries', problems: checked.left.map(describeProblem) });
  const { data } = unpacked.right;
  const files = new Map<string, Buffer>();
  let offset = 0;
  for (const entry of checked.right) {
    if (entry.kind !== 'file') continue;
    if (offset + entry.size > data.length)
      return fail({ _tag: 'SizeMismatch', why: `${entry.path} runs past the end of the archive (truncated?)` });
    const content = data.subarray(offset, offset + entry.size);
    offset += entry.size;
    if (sha256Hex(content) !== entry.sha256) return fail({ _tag: 'ChecksumMismatch', path: entry.path });
    files.set(entry.path, content);
  }
  if (offset !== data.length)
    return fail({
      _tag: 'SizeMismatch',
      why: `${data.length - offset} bytes after the last entry that no entry lists`,
    });
  return { _tag: 'Right', right: { manifest: manifest.right, entries: checked.right, files } };
}

export function describeArchiveError(error: ArchiveError): string {
  switch (error._tag) {
    case 'NotAnArchive':
      return `not a CrustCore backup: ${error.why}`;
    case 'UnsafeEntries':
      return `refused: the archive has entries restore never writes — ${error.problems.slice(0, 5).join('; ')}`;
    case 'ChecksumMismatch':
      return `refused: ${error.path} does not match its SHA-256 in the manifest (the archive is damaged or altered)`;
    case 'SizeMismatch':
      return `refused: ${error.why}`;
  }
}
