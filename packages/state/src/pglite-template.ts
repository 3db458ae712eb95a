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
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
