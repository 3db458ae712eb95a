/**
 * The per-installation MAC key for receipts (and the head file). It lives at
 * `$CRUSTCORE_HOME/receipt.key` (default `~/.crustcore/receipt.key`), never
 * in the log, a sandbox or model-visible text. It is created on first use
 * with mode 0600, and a key file that others could read or write is refused:
 * a key anyone can read authenticates nothing.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, constants, fstatSync, fsyncSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { inspect } from 'node:util';
import { err, ok, type Result } from '@crustcore/kernel';
import { syncDirectory } from './durable-file.js';

export const RECEIPT_KEY_BYTES = 32;
const KEY_FILE_BYTES = RECEIPT_KEY_BYTES * 2 + 1; // hex + newline
const KEY_TEXT = /^[0-9a-f]{64}\n?$/;

export type ReceiptKeyError =
  | { readonly _tag: 'KeyFileTooOpen'; readonly path: string; readonly mode: number }
  | { readonly _tag: 'KeyFileNotOwned'; readonly path: string; readonly uid: number }
  | { readonly _tag: 'KeyFileMalformed'; readonly path: string; readonly reason: string }
  | { readonly _tag: 'KeyFileMissing'; readonly path: string }
  | { readonly _tag: 'KeyFileUnreadable'; readonly path: string; readonly reason: string };

/**
 * HMAC-SHA256 key material. A class with a private field so it never leaks
 * through JSON, string conversion or console inspection.
 */
export class ReceiptKey {
  readonly #bytes: Uint8Array;

  private constructor(bytes: Uint8Array) {
    this.#bytes = Uint8Array.from(bytes);
  }

  static fromBytes(bytes: Uint8Array): Result<ReceiptKeyError, ReceiptKey> {
    if (bytes.length !== RECEIPT_KEY_BYTES) {
      return err({ _tag: 'KeyFileMalformed', path: '(bytes)', reason: `expected ${RECEIPT_KEY_BYTES} bytes` });
    }
    return ok(new ReceiptKey(bytes));
  }

  /** HMAC-SHA256 over a domain-separated message; hex. */
  mac(domain: string, message: string): string {
    return createHmac('sha256', this.#bytes).update(`${domain}\n`).update(message).digest('hex');
  }

  /** Constant-time check of a hex MAC. */
  verify(domain: string, message: string, macHex: string): boolean {
    if (typeof macHex !== 'string' || !/^[0-9a-f]{64}$/.test(macHex)) return false;
    return timingSafeEqual(Buffer.from(this.mac(domain, message), 'hex'), Buffer.from(macHex, 'hex'));
  }

  toJSON(): never {
    throw new Error('a receipt key is never serialized');
  }

  toString(): string {
    return '[receipt key]';
  }

  [inspect.custom](): string {
    return '[receipt key]';
  }
}

/**
 * `$CRUSTCORE_HOME` (made absolute), or `~/.crustcore`. The one definition:
 * the CLI, the ledger and the verify package must agree on it, or `recover`
 * would look for journals somewhere other than where `run` wrote them.
 */
export function crustcoreHome(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const home = env.CRUSTCORE_HOME;
  return home !== undefined && home !== '' ? resolve(home) : join(homedir(), '.crustcore');
}

export const receiptKeyPath = (env: NodeJS.ProcessEnv): string => join(crustcoreHome(env), 'receipt.key');

/** Reads a key file, refusing one that is not a private regular file of ours. */
export function loadReceiptKey(path: string): Result<ReceiptKeyError, ReceiptKey> {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return err({ _tag: 'KeyFileMissing', path });
    return err({ _tag: 'KeyFileUnreadable', path, reason: code ?? String(error) });
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return err({ _tag: 'KeyFileMalformed', path, reason: 'not a regular file' });
    if ((stat.mode & 0o077) !== 0) return err({ _tag: 'KeyFileTooOpen', path, mode: stat.mode & 0o777 });
    const uid = typeof process.getuid === 'function' ? process.getuid() : stat.uid;
    if (stat.uid !== uid) return err({ _tag: 'KeyFileNotOwned', path, uid: stat.uid });
    const buffer = Buffer.alloc(KEY_FILE_BYTES + 1);
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    const text = buffer.subarray(0, read).toString('latin1');
    if (!KEY_TEXT.test(text)) return err({ _tag: 'KeyFileMalformed', path, reason: 'expected 64 lowercase hex chars' });
    return ReceiptKey.fromBytes(Buffer.from(text.slice(0, 64), 'hex'));
  } finally {
    closeSync(fd);
  }
}

/**
 * Loads the installation's key, creating it (0600, in a 0700 directory) on
 * first use. O_EXCL makes two first uses agree on one key.
 */
export function openReceiptKey(env: NodeJS.ProcessEnv): Result<ReceiptKeyError, ReceiptKey> {
  const path = receiptKeyPath(env);
  const existing = loadReceiptKey(path);
  if (existing._tag === 'Right' || existing.left._tag !== 'KeyFileMissing') return existing;
  return createReceiptKeyFile(path);
}

/** Creates a new random key file at `path`; fails if one exists. */
export function createReceiptKeyFile(path: string): Result<ReceiptKeyError, ReceiptKey> {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch (error) {
    // Someone else created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return loadReceiptKey(path);
    return err({ _tag: 'KeyFileUnreadable', path, reason: (error as NodeJS.ErrnoException).code ?? String(error) });
  }
  const bytes = randomBytes(RECEIPT_KEY_BYTES);
  try {
    writeSync(fd, `${bytes.toString('hex')}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  syncDirectory(dirname(path));
  return ReceiptKey.fromBytes(bytes);
}

export function describeReceiptKeyError(error: ReceiptKeyError): string {
  switch (error._tag) {
    case 'KeyFileTooOpen':
      return `${error.path} has mode ${error.mode.toString(8)}; it must be readable by its owner only (chmod 600)`;
    case 'KeyFileNotOwned':
      return `${error.path} belongs to uid ${error.uid}, not to this user`;
    case 'KeyFileMalformed':
      return `${error.path}: ${error.reason}`;
    case 'KeyFileMissing':
      return `no receipt key at ${error.path}`;
    case 'KeyFileUnreadable':
      return `cannot read ${error.path}: ${error.reason}`;
  }
}
