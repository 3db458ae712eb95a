/**
 * The registry as a running task reads it: on every use, so a person's
 * `crustcore mcp approve` (or a pin they revoke) counts at once, but decoded
 * only when the file changed. Reading and decoding a 43 kB registry (four
 * servers, twelve pinned tools each) took ~275 µs, and each MCP call reads
 * it twice (when planned, and again when run); a stat takes a few µs.
 *
 * A stat equal to the last read's (device, inode, size, mtime, ctime) means
 * the same content only once the file has settled: file times come from a
 * coarse clock, so a same-size rewrite within one tick of the last write —
 * an atomic write's new file may even get the freed inode number — would
 * stat the same. A file changed less than SETTLE_MS before it was read is
 * therefore read again on every use and compared byte for byte (decoded
 * only when the bytes differ) until its last change is older than that.
 */
import { type BigIntStats, readFileSync, statSync } from 'node:fs';
import { err, ok, type Result } from '@crustcore/kernel';
import { type GatewayError, gatewayError } from '../errors.js';
import { decodeRegistry, emptyRegistry, readRegistry } from './registry-store.js';
import type { RegistryFile } from './server-record.js';

/** Far above a file time's tick (1–10 ms) and the skew between Date.now and the kernel's coarse clock. */
export const SETTLE_MS = 1_000;

interface LastRead {
  readonly identity: string;
  readonly bytes: Buffer;
  readonly registry: RegistryFile;
  /** The file's last change was SETTLE_MS older than this read: an equal stat means equal content. */
  readonly settled: boolean;
}

export class RegistryReader {
  readonly #path: string;
  readonly #now: () => number;
  #last: LastRead | null = null;

  /** `now` is the wall clock in ms (tests move it). */
  constructor(path: string, now: () => number = Date.now) {
    this.#path = path;
    this.#now = now;
  }

  /** The registry as the file holds it now; the same object as last time while the file is unchanged. */
  read(): Result<GatewayError, RegistryFile> {
    // Taken before the stat: a change after this instant cannot carry the ctime seen below if that
    // ctime is SETTLE_MS older than it.
    const readAtMs = this.#now();
    let stat: BigIntStats | undefined;
    try {
      stat = statSync(this.#path, { bigint: true, throwIfNoEntry: false });
    } catch {
      this.#last = null;
      return readRegistry(this.#path);
    }
    if (stat === undefined) {
      this.#last = null;
      return ok(emptyRegistry());
    }
    const identity = `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
    const last = this.#last;
    if (last?.settled && last.identity === identity) return ok(last.registry);
    const settled = Number(stat.ctimeNs / 1_000_000n) < readAtMs - SETTLE_MS;
    return this.#reread(identity, settled);
  }

  #reread(identity: string, settled: boolean): Result<GatewayError, RegistryFile> {
    let bytes: Buffer;
    try {
      bytes = readFileSync(this.#path);
    } catch (error) {
      this.#last = null;
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return ok(emptyRegistry());
      return err(gatewayError('Io', `cannot read ${this.#path}: ${(error as Error).message}`));
    }
    const last = this.#last;
    if (last?.bytes.equals(bytes)) {
      this.#last = { identity, bytes: last.bytes, registry: last.registry, settled };
      return ok(last.registry);
    }
    const decoded = decodeRegistry(this.#path, bytes);
    this.#last = decoded._tag === 'Right' ? { identity, bytes, registry: decoded.right, settled } : null;
    return decoded;
  }
}
