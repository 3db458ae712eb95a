/**
 * The index cache: the last capsule built for a repository, stored as JSON
 * beside its CrustCore state (never in the work tree). It is read back
 * through the capsule codec — a damaged or foreign file is ignored and the
 * index rebuilt, never trusted — and written atomically (temp file, rename).
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as t from 'io-ts';
import { type CapsuleFile, type RepoCapsule, RepoCapsuleCodec } from './capsule.js';

/** Bumped whenever what a file's entry holds would change for the same text (queries, roles, limits). */
export const INDEXER_VERSION = 1;

const CacheCodec = t.type({ indexer: t.number, capsule: RepoCapsuleCodec });

export const cacheFileOf = (cacheDir: string): string => join(cacheDir, 'capsule.json');

/** Reusable analyses by blob and language (the same text at two paths is analysed once). */
export type EntryCache = ReadonlyMap<string, Pick<CapsuleFile, 'lines' | 'symbolSource' | 'symbols'>>;
export const entryKey = (blob: string, language: string | null): string => `${blob}\u0000${language ?? ''}`;

export async function readEntryCache(cacheDir: string): Promise<EntryCache> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(cacheFileOf(cacheDir), 'utf8'));
  } catch {
    return new Map();
  }
  const decoded = CacheCodec.decode(raw);
  if (decoded._tag === 'Left' || decoded.right.indexer !== INDEXER_VERSION) return new Map();
  const entries = new Map<string, Pick<CapsuleFile, 'lines' | 'symbolSource' | 'symbols'>>();
  for (const file of decoded.right.capsule.files) {
    entries.set(entryKey(file.blob, file.language), {
      lines: file.lines,
      symbolSource: file.symbolSource,
      symbols: file.symbols,
    });
  }
  return entries;
}

export async function writeCache(cacheDir: string, capsule: RepoCapsule): Promise<void> {
  await mkdir(cacheDir, { recursive: true, mode: 0o700 });
  const path = cacheFileOf(cacheDir);
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, JSON.stringify({ indexer: INDEXER_VERSION, capsule }), { mode: 0o600 });
  await rename(temporary, path);
}
