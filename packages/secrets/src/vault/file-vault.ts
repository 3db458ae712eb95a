/**
 * The encrypted file vault: the fallback store when no OS keychain is
 * available. Every operation reads the file afresh (another crustcore process
 * may have changed it), and every change rewrites it atomically, so a crash
 * leaves the old or the new vault, never a torn one. Operations within one
 * process are serialized. Cross-process writers are not locked against each
 * other: the last writer wins (the CLI is the only writer in practice).
 */
import { Buffer } from 'node:buffer';
import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { err, ok, type Result } from '@crustcore/kernel';
import { SecretHandle } from '../handle.js';
import { SecretMaterial } from '../material.js';
import type { SecretStore, StoredSecret } from '../store.js';
import { writeFileAtomic } from './atomic-write.js';
import { ioError, type StoreError, type VaultError } from './errors.js';
import {
  type Kdf,
  MAX_VAULT_BYTES,
  MAX_VAULT_ENTRIES,
  openVault,
  parseVaultEnvelope,
  sealVault,
  type VaultEntry,
} from './format.js';
import { deriveScryptKey, loadKeyFile, newScryptKdf, type VaultKeySource } from './key.js';

export interface FileVaultOptions {
  readonly path: string;
  readonly key: VaultKeySource;
  /** Clock for `updatedAtMs`; default Date.now. */
  readonly nowMs?: () => number;
}

type ReadResult = Result<VaultError, { readonly entries: VaultEntry[] } | null>;

async function readVaultFile(path: string): Promise<Result<VaultError, Buffer | null>> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return ok(null);
    return err(ioError('open the vault', error));
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return err({ _tag: 'VaultCorrupt', reason: 'not a regular file' });
    if (info.size > MAX_VAULT_BYTES) return err({ _tag: 'VaultTooLarge', bytes: info.size, maxBytes: MAX_VAULT_BYTES });
    return ok(await handle.readFile());
  } catch (error) {
    return err(ioError('read the vault', error));
  } finally {
    await handle.close();
  }
}

const zeroEntries = (entries: readonly VaultEntry[]): void => {
  for (const entry of entries) entry.value.fill(0);
};

export class FileVault implements SecretStore {
  readonly kind = 'file-vault' as const;
  readonly #path: string;
  readonly #kdf: Kdf;
  readonly #nowMs: () => number;
  #key: Buffer | null;
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(path: string, kdf: Kdf, key: Buffer, nowMs: () => number) {
    this.#path = path;
    this.#kdf = kdf;
    this.#key = key;
    this.#nowMs = nowMs;
  }

  /**
   * Opens the vault at `path`, or prepares a new one (nothing is written
   * until the first `set`). An existing vault is read and authenticated
   * now, so a wrong key fails here.
   */
  static async open(options: FileVaultOptions): Promise<Result<VaultError, FileVault>> {
    const file = await readVaultFile(options.path);
    if (file._tag === 'Left') return file;
    const nowMs = options.nowMs ?? Date.now;
    const source = options.key;
    let kdf: Kdf;
    if (file.right === null) {
      kdf = source.kind === 'passphrase' ? newScryptKdf(source.scrypt) : { kind: 'key-file' };
    } else {
      const envelope = parseVaultEnvelope(file.right);
      if (envelope._tag === 'Left') return envelope;
      kdf = envelope.right.kdf;
      const wanted = source.kind === 'passphrase' ? 'scrypt' : 'key-file';
      if (kdf.kind !== wanted) {
        return err({ _tag: 'VaultKeyKindMismatch', vaultKey: kdf.kind === 'scrypt' ? 'passphrase' : 'key-file' });
      }
    }
    let key: Buffer;
    if (source.kind === 'key-file') {
      const loaded = await loadKeyFile(source.path, source.createIfMissing ?? false);
      if (loaded._tag === 'Left') return loaded;
      key = loaded.right;
    } else {
      if (kdf.kind !== 'scrypt') return err({ _tag: 'VaultKeyKindMismatch', vaultKey: 'key-file' });
      try {
        key = await deriveScryptKey(source.passphrase, kdf);
      } catch (error) {
        return err(ioError('derive the key', error));
      }
    }
    const vault = new FileVault(options.path, kdf, key, nowMs);
    if (file.right !== null) {
      const check = await vault.#read();
      if (check._tag === 'Left') {
        vault.close();
        return check;
      }
      if (check.right !== null) zeroEntries(check.right.entries);
    }
    return ok(vault);
  }

  get path(): string {
    return this.#path;
  }

  /** Zero-fills the derived key. Later operations fail. */
  close(): void {
    this.#key?.fill(0);
    this.#key = null;
  }

  // ─── SecretStore ────────────────────────────────────────────────────────

  list(): Promise<Result<StoreError, readonly StoredSecret[]>> {
    return this.#serialized(async () => {
      const read = await this.#read();
      if (read._tag === 'Left') return read;
      const entries = read.right?.entries ?? [];
      const listed: StoredSecret[] = [];
      for (const entry of entries) {
        const handle = SecretHandle.create(entry.name, entry.label);
        if (handle._tag === 'Right') listed.push({ handle: handle.right, updatedAtMs: entry.updatedAtMs });
      }
      zeroEntries(entries);
      return ok(listed);
    });
  }

  get(handle: SecretHandle): Promise<Result<StoreError, SecretMaterial>> {
    return this.#serialized(async () => {
      const read = await this.#read();
      if (read._tag === 'Left') return read;
      const entries = read.right?.entries ?? [];
      try {
        const entry = entries.find((e) => e.name === handle.name);
        if (entry === undefined) return err({ _tag: 'SecretNotFound', uri: handle.uri });
        const material = SecretMaterial.fromBytes(entry.value);
        if (material._tag === 'Left')
          return err({ _tag: 'SecretUnusable', uri: handle.uri, reason: material.left._tag });
        return ok(material.right);
      } finally {
        zeroEntries(entries);
      }
    });
  }

  set(handle: SecretHandle, material: SecretMaterial): Promise<Result<StoreError, void>> {
    return this.#serialized(async () => {
      const read = await this.#read();
      if (read._tag === 'Left') return read;
      const entries = (read.right?.entries ?? []).filter((e) => {
        if (e.name !== handle.name) return true;
        e.value.fill(0);
        return false;
      });
      if (entries.length >= MAX_VAULT_ENTRIES) {
        zeroEntries(entries);
        return err({ _tag: 'StoreCommandFailed', operation: 'store the secret', reason: 'the vault is full' });
      }
      const value = Buffer.from(material.expose(), 'utf8');
      entries.push({ name: handle.name, label: handle.label, updatedAtMs: this.#nowMs(), value });
      const written = await this.#write(entries);
      zeroEntries(entries);
      return written;
    });
  }

  remove(handle: SecretHandle): Promise<Result<StoreError, boolean>> {
    return this.#serialized(async () => {
      const read = await this.#read();
      if (read._tag === 'Left') return read;
      const entries = read.right?.entries ?? [];
      const kept = entries.filter((e) => e.name !== handle.name);
      if (kept.length === entries.length) {
        zeroEntries(entries);
        return ok(false);
      }
      const written = await this.#write(kept);
      zeroEntries(entries);
      return written._tag === 'Left' ? written : ok(true);
    });
  }

  // ─── internals ──────────────────────────────────────────────────────────

  #serialized<T>(operation: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(operation, operation);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  async #read(): Promise<ReadResult> {
    if (this.#key === null) return err({ _tag: 'VaultIoError', operation: 'use a closed vault', code: null });
    const file = await readVaultFile(this.#path);
    if (file._tag === 'Left') return file;
    if (file.right === null) return ok(null);
    const envelope = parseVaultEnvelope(file.right);
    if (envelope._tag === 'Left') return envelope;
    const opened = openVault(this.#key, envelope.right);
    file.right.fill(0);
    return opened._tag === 'Left' ? opened : ok({ entries: opened.right });
  }

  async #write(entries: readonly VaultEntry[]): Promise<Result<VaultError, void>> {
    if (this.#key === null) return err({ _tag: 'VaultIoError', operation: 'use a closed vault', code: null });
    const sealed = sealVault(this.#key, this.#kdf, entries);
    try {
      await mkdir(dirname(this.#path), { recursive: true, mode: 0o700 });
      await writeFileAtomic(this.#path, sealed, 0o600);
      return ok(undefined);
    } catch (error) {
      return err(ioError('write the vault', error));
    } finally {
      sealed.fill(0);
    }
  }

  toString(): string {
    return `FileVault(${this.#path})`;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }
}
