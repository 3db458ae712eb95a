/**
 * The repository's files and their text, through the verify package's git
 * helpers (the trusted host runner, confine's neutral environment; nothing
 * here spawns). Files come from the git index (`ls-files -s`: path, mode and
 * blob id — the incremental key) and text from the object store by blob id,
 * never from the work tree, so what is indexed is exactly what the key names.
 */
import { type GitLocation, runGitAt } from '@crustcore/verify';

export interface IndexedPath {
  readonly path: string;
  readonly mode: string;
  readonly blob: string;
}

/** Files larger than this are listed but not read (generated code, data, vendored bundles). */
export const MAX_FILE_BYTES = 1024 * 1024;
/** One `cat-file --batch` call reads at most about this much. */
const BATCH_BYTES = 8 * 1024 * 1024;
const LISTING_BYTES = 64 * 1024 * 1024;

export async function listIndex(location: GitLocation): Promise<readonly IndexedPath[] | string> {
  const listed = await runGitAt(location, ['ls-files', '-s', '-z'], { maxOutputBytes: LISTING_BYTES });
  if (listed._tag === 'Left') return listed.left.message;
  const files: IndexedPath[] = [];
  for (const record of listed.right.stdout.text.split('\0')) {
    const match = /^(\d{6}) ([0-9a-f]{40,64}) (\d)\t([\s\S]+)$/.exec(record);
    // Stage 0 only: during a merge conflict the other stages name versions that are not the file.
    if (match !== null && match[3] === '0') files.push({ mode: match[1]!, blob: match[2]!, path: match[4]! });
  }
  return files;
}

export async function unstagedCount(location: GitLocation): Promise<number> {
  const changed = await runGitAt(location, ['diff-files', '--name-only', '-z']);
  if (changed._tag === 'Left') return 0;
  return changed.right.stdout.text.split('\0').filter((name) => name !== '').length;
}

export async function headCommit(location: GitLocation): Promise<string | null> {
  const head = await runGitAt(location, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
  return head._tag === 'Left' ? null : head.right.stdout.text.trim();
}

async function blobSizes(location: GitLocation, ids: readonly string[]): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  if (ids.length === 0) return sizes;
  const checked = await runGitAt(location, ['cat-file', '--batch-check'], { stdin: `${ids.join('\n')}\n` });
  if (checked._tag === 'Left') return sizes;
  for (const line of checked.right.stdout.text.split('\n')) {
    const match = /^([0-9a-f]{40,64}) blob (\d+)$/.exec(line);
    if (match !== null) sizes.set(match[1]!, Number(match[2]));
  }
  return sizes;
}

/**
 * Splits `cat-file --batch` output (`<id> blob <size>\n<bytes>\n` per object, in request order) by
 * finding each requested id's header in turn. The runner hands back UTF-8 text, where a binary
 * blob's byte count no longer matches its length in characters; headers, not sizes, delimit.
 */
function lineStartOf(text: string, marker: string, from: number): number {
  const found = text.indexOf(`\n${marker}`, from);
  return found < 0 ? -1 : found + 1;
}

function splitBatch(text: string, ids: readonly string[], into: Map<string, string>): void {
  let at = 0;
  const headers: { id: string; start: number; content: number }[] = [];
  for (const id of ids) {
    const marker = `${id} blob `;
    const start = text.startsWith(marker, at) ? at : lineStartOf(text, marker, at);
    if (start < 0) continue; // `<id> missing`
    const newline = text.indexOf('\n', start);
    if (newline < 0) break;
    headers.push({ id, start, content: newline + 1 });
    at = newline + 1;
  }
  headers.forEach((header, index) => {
    const end = index + 1 < headers.length ? (headers[index + 1] as { start: number }).start - 1 : text.length - 1;
    into.set(header.id, text.slice(header.content, Math.max(header.content, end)));
  });
}

export interface BlobRead {
  /** Blob id → text (UTF-8; binary blobs show replacement characters), for blobs no larger than MAX_FILE_BYTES. */
  readonly texts: Map<string, string>;
  /** Blob ids left unread because they are larger. */
  readonly tooLarge: ReadonlySet<string>;
}

export async function readBlobs(location: GitLocation, ids: readonly string[]): Promise<BlobRead> {
  const unique = [...new Set(ids)];
  const sizes = await blobSizes(location, unique);
  const tooLarge = new Set(unique.filter((id) => (sizes.get(id) ?? 0) > MAX_FILE_BYTES));
  const texts = new Map<string, string>();
  let batch: string[] = [];
  let batchBytes = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    const read = await runGitAt(location, ['cat-file', '--batch'], {
      stdin: `${batch.join('\n')}\n`,
      maxOutputBytes: BATCH_BYTES + MAX_FILE_BYTES + batch.length * 128,
    });
    if (read._tag === 'Right') splitBatch(read.right.stdout.text, batch, texts);
    batch = [];
    batchBytes = 0;
  };
  for (const id of unique) {
    if (tooLarge.has(id)) continue;
    batch.push(id);
    batchBytes += sizes.get(id) ?? 0;
    if (batchBytes >= BATCH_BYTES) await flush();
  }
  await flush();
  return { texts, tooLarge };
}
