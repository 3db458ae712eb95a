/**
 * Where a vault's key comes from: scrypt over a passphrase (salt and cost
 * stored in the vault header) or a key file of 32 random bytes in hex,
 * readable by its owner only. A key file with looser permissions is refused,
 * not fixed: someone else may already have read it.
 */
import { Buffer } from 'node:buffer';
import { randomBytes, scrypt } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { err, ok, type Result } from '@crustcore/kernel';
import type { SecretMaterial } from '../material.js';
import { fsyncDirectory } from './atomic-write.js';
import { ioError, type VaultError } from './errors.js';
import { DEFAULT_SCRYPT, type Kdf, KEY_BYTES, type ScryptParams } from './format.js';

// ─── model ────────────────────────────────────────────────────────────────

export type VaultKeySource =
  | {
      readonly kind: 'passphrase';
      readonly passphrase: SecretMaterial;
      /** Cost for a new vault; an existing vault's header decides for itself. */
      readonly scrypt?: ScryptParams;
    }
  | {
      readonly kind: 'key-file';
      readonly path: string;
      /** Create the key file (0600, random) when it does not exist. */
      readonly createIfMissing?: boolean;
    };

const KEY_FILE_PATTERN = /^([0-9a-f]{64})\n?$/;
const MAX_KEY_FILE_BYTES = 256;

// ─── passphrase ───────────────────────────────────────────────────────────

export const newScryptKdf = (params: ScryptParams = DEFAULT_SCRYPT): Kdf => ({
  kind: 'scrypt',
  N: params.N,
  r: params.r,
  p: params.p,
  salt: randomBytes(16).toString('base64'),
});

export function deriveScryptKey(passphrase: SecretMaterial, kdf: Kdf & { kind: 'scrypt' }): Promise<Buffer> {
  const salt = Buffer.from(kdf.salt, 'base64');
  const secret = Buffer.from(passphrase.expose(), 'utf8');
  const maxmem = 128 * kdf.N * kdf.r * kdf.p + 64 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, KEY_BYTES, { N: kdf.N, r: kdf.r, p: kdf.p, maxmem }, (error, key) => {
      secret.fill(0);
      if (error) reject(error);
      else resolve(key);
    });
  });
}

// ─── key file ─────────────────────────────────────────────────────────────

/** Reads (or creates) a key file, refusing any mode that lets group or others in. */
export async function loadKeyFile(path: string, createIfMissing: boolean): Promise<Result<VaultError, Buffer>> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ENOENT') return createIfMissing ? createKeyFile(path) : err({ _tag: 'KeyFileMissing', path });
    if (code === 'ELOOP') return err({ _tag: 'KeyFileMalformed', path });
    return err(ioError('open the key file', error));
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return err({ _tag: 'KeyFileMalformed', path });
    if ((info.mode & 0o077) !== 0) {
      return err({ _tag: 'KeyFileTooOpen', path, mode: `0${(info.mode & 0o777).toString(8)}` });
    }
    if (typeof process.getuid === 'function' && info.uid !== process.getuid()) {
      return err({ _tag: 'KeyFileWrongOwner', path });
    }
    if (info.size > MAX_KEY_FILE_BYTES) return err({ _tag: 'KeyFileMalformed', path });
    const raw = await handle.readFile();
    const text = raw.toString('latin1');
    raw.fill(0);
    const match = KEY_FILE_PATTERN.exec(text);
    if (match === null) return err({ _tag: 'KeyFileMalformed', path });
    return ok(Buffer.from(match[1]!, 'hex'));
  } catch (error) {
    return err(ioError('read the key file', error));
  } finally {
    await handle.close();
  }
}

async function createKeyFile(path: string): Promise<Result<VaultError, Buffer>> {
  const key = randomBytes(KEY_BYTES);
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    // O_EXCL: if another process created it meanwhile, fail rather than overwrite its key.
    const handle = await open(
      path,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
    try {
      await handle.writeFile(`${key.toString('hex')}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fsyncDirectory(dirname(path));
    return ok(key);
  } catch (error) {
    key.fill(0);
    if ((error as { code?: string }).code === 'EEXIST') return loadKeyFile(path, false);
    return err(ioError('create the key file', error));
  }
}
