/**
 * Short-lived file handoff, for tools that only read a credential from a
 * file: a 0600 file in a fresh 0700 directory, alive only while `use` runs,
 * then overwritten with zeros and unlinked. Prefer the proxy or stdin (a
 * runner's `stdin` bytes) when the tool allows either.
 */
import { Buffer } from 'node:buffer';
import { constants } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SecretMaterial } from '../material.js';

export interface SecretFileOptions {
  /** Parent for the private directory; default os.tmpdir(). */
  readonly directory?: string;
  /** File name inside it; default `secret`. */
  readonly fileName?: string;
}

/** Writes the secret to a private file, runs `use(path)`, and removes the file whatever happens. */
export async function withSecretFile<T>(
  material: SecretMaterial,
  use: (path: string) => Promise<T>,
  options: SecretFileOptions = {},
): Promise<T> {
  const directory = await mkdtemp(join(options.directory ?? tmpdir(), 'crustcore-handoff-'));
  const path = join(directory, options.fileName ?? 'secret');
  try {
    const bytes = Buffer.from(material.expose(), 'utf8');
    try {
      const handle = await open(
        path,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o600,
      );
      try {
        await handle.writeFile(bytes);
      } finally {
        await handle.close();
      }
    } finally {
      bytes.fill(0);
    }
    return await use(path);
  } finally {
    await scrub(path);
    await rm(directory, { recursive: true, force: true });
  }
}

/** Overwrites the file's bytes in place before unlinking (best effort: see the vault's note on copies). */
async function scrub(path: string): Promise<void> {
  try {
    const handle = await open(path, constants.O_WRONLY | constants.O_NOFOLLOW);
    try {
      const { size } = await handle.stat();
      await handle.write(Buffer.alloc(size), 0, size, 0);
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Already gone (the tool deleted it): nothing to scrub.
  }
}

/** Secret bytes for a child's stdin (ProcessSpec.stdin): the pipe is the short-lived handoff. */
export const secretStdin = (material: SecretMaterial): Uint8Array => new TextEncoder().encode(material.expose());
