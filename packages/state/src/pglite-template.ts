/**
 * A fresh PGlite cluster costs an `initdb` inside WebAssembly: about 8 s of
 * CPU, paid by every new database (each `crustcore mcp`, daemon, memory
 * store and in-memory test instance). The build runs that `initdb` once and
 * keeps the empty cluster as a gzipped tarball in `dist/`
 * (`scripts/make-pglite-template.mjs`); a new database starts from it in
 * about 1.7 s of CPU.
 *
 * The tarball is named by the PGlite version that made it and is used only by
 * that same version (catalog layout and WASM build go together); with any
 * other version, or without the file, a new database runs `initdb` as before.
 * A directory that already holds a cluster (`PG_VERSION`) is opened as it is.
 *
 * A new data directory gets the template's files written by Node itself
 * (`unpackTemplate`): PGlite's own loader writes the 40 MB through its
 * emulated file system, about 1.8 s of CPU more per new database. Only an
 * in-memory database still loads the tarball through PGlite.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

/** Where the build writes the template for PGlite `version` (the same path from src/ and from dist/). */
export function templatePath(version: string): string {
  return fileURLToPath(new URL(`../dist/pglite-template-${version}.tar.gz`, import.meta.url));
}

/** The installed PGlite's version, read from its package.json (null when it cannot be found). */
export function installedPgliteVersion(): string | null {
  try {
    const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
    // The entry is <package>/dist/index.cjs.
    const manifest = JSON.parse(readFileSync(join(dirname(dirname(entry)), 'package.json'), 'utf8')) as {
      version?: unknown;
    };
    return typeof manifest.version === 'string' ? manifest.version : null;
  } catch {
    return null;
  }
}

/** The empty-cluster template for a database that has none yet, or undefined (then PGlite runs initdb). */
export function templateFor(
  dataDir: string | undefined,
  version: string | null = installedPgliteVersion(),
): Blob | undefined {
  if (dataDir !== undefined && existsSync(join(dataDir, 'PG_VERSION'))) return undefined;
  if (version === null) return undefined;
  try {
    return new Blob([readFileSync(templatePath(version))]);
  } catch {
    return undefined;
  }
}

interface TarEntry {
  readonly path: string;
  readonly directory: boolean;
  readonly mode: number;
  readonly data: Buffer;
}

const field = (block: Buffer, start: number, length: number): string => {
  const raw = block.subarray(start, start + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? length : end).toString('utf8');
};

/** The template's path as a relative one inside the data directory; a name that could leave it is refused. */
function safeRelative(name: string): string {
  const parts = name.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.length === 0 || parts.some((part) => part === '..')) throw new Error(`template entry ${name} is unsafe`);
  return parts.join('/');
}

/** The regular files and directories of a ustar archive (what PGlite's `dumpDataDir` writes). */
function tarEntries(tar: Buffer): TarEntry[] {
  const entries: TarEntry[] = [];
  for (let offset = 0; offset + 512 <= tar.length; ) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const prefix = field(header, 345, 155);
    const name = prefix === '' ? field(header, 0, 100) : `${prefix}/${field(header, 0, 100)}`;
    const size = Number.parseInt(field(header, 124, 12).trim() || '0', 8);
    const type = String.fromCharCode(header[156] ?? 0);
    const mode = Number.parseInt(field(header, 100, 8).trim() || '600', 8);
    const data = tar.subarray(offset + 512, offset + 512 + size);
    if (type === '5') entries.push({ path: safeRelative(name), directory: true, mode, data });
    else if (type === '0' || type === '\0') entries.push({ path: safeRelative(name), directory: false, mode, data });
    else throw new Error(`template entry ${name} has type ${type}, not a file or directory`);
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return entries;
}

/**
 * Writes the empty-cluster template into `dataDir` (which holds no cluster yet) and returns true;
 * false when there is no template for this PGlite (then PGlite runs initdb). `PG_VERSION` is
 * written last: a directory left half-written by a crash has none, so the next open unpacks it again.
 */
export function unpackTemplate(dataDir: string, version: string | null = installedPgliteVersion()): boolean {
  if (existsSync(join(dataDir, 'PG_VERSION')) || version === null) return false;
  let tarball: Buffer;
  try {
    tarball = readFileSync(templatePath(version));
  } catch {
    return false;
  }
  const entries = tarEntries(gunzipSync(tarball));
  const isVersion = (entry: TarEntry) => entry.path === 'PG_VERSION';
  for (const entry of [...entries.filter((e) => !isVersion(e)), ...entries.filter(isVersion)]) {
    const target = join(dataDir, entry.path);
    if (entry.directory) mkdirSync(target, { recursive: true, mode: entry.mode });
    else {
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, entry.data, { mode: entry.mode });
    }
  }
  return true;
}
