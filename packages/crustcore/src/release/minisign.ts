/**
 * Minisign-compatible Ed25519 signatures with node:crypto alone, so a
 * `crustcore` that is already installed can check the next release without a
 * new dependency, and a user's own `minisign -V` can check the same files.
 * (The tests sign with the real minisign where it is installed; it was not
 * on the machine where this was written, so there they sign with ours.)
 *
 * The formats (minisign's documented ones):
 *   public key  `untrusted comment: …` then base64("Ed" ‖ key id[8] ‖ key[32])
 *   signature   `untrusted comment: …`, base64(alg[2] ‖ key id[8] ‖ sig[64]),
 *               `trusted comment: …`, base64(global sig[64])
 * `alg` is "ED" (the file's BLAKE2b-512 is signed; minisign's default) or
 * "Ed" (the file itself, older minisign). The global signature covers
 * sig[64] ‖ the trusted comment, so editing the comment breaks it.
 *
 * Both files are untrusted input: they are decoded by the io-ts codecs below
 * and every failure is a value that says what to do next.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  sign,
  verify,
} from 'node:crypto';
import * as t from 'io-ts';

const ALG_PREHASHED = 'ED';
const ALG_LEGACY = 'Ed';
const KEY_ID_BYTES = 8;
const UNTRUSTED = 'untrusted comment: ';
const TRUSTED = 'trusted comment: ';

export interface MinisignPublicKey {
  readonly keyId: Buffer;
  readonly key: KeyObject;
}

export interface MinisignSignature {
  readonly algorithm: typeof ALG_PREHASHED | typeof ALG_LEGACY;
  readonly keyId: Buffer;
  readonly signature: Buffer;
  readonly trustedComment: string;
  readonly globalSignature: Buffer;
}

export type VerifyFailure =
  | 'bad-public-key'
  | 'bad-signature-file'
  | 'wrong-key'
  | 'bad-signature'
  | 'bad-trusted-comment';

export interface VerifyError {
  readonly reason: VerifyFailure;
  readonly message: string;
}

export type Verified =
  | { readonly _tag: 'Right'; readonly right: { readonly trustedComment: string; readonly keyId: string } }
  | { readonly _tag: 'Left'; readonly left: VerifyError };

/** The key id as minisign prints it: the little-endian 64-bit number, in upper-case hex. */
export const keyIdHex = (keyId: Buffer): string => Buffer.from(keyId).reverse().toString('hex').toUpperCase();

/** Strict base64 (what minisign writes): decoding and re-encoding must give the same text. */
function strictBase64(text: string): Buffer | null {
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : null;
}

function ed25519PublicKey(raw: Buffer): KeyObject | null {
  try {
    return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
  } catch {
    return null;
  }
}

/** A public key: the two-line file, or just its base64 line (what `minisign -P` takes). */
export const MinisignPublicKeyText = new t.Type<MinisignPublicKey, string, unknown>(
  'MinisignPublicKey',
  (u): u is MinisignPublicKey => typeof u === 'object' && u !== null && 'keyId' in u && 'key' in u,
  (u, c) => {
    if (typeof u !== 'string') return t.failure(u, c, 'a public key is text');
    const lines = u
      .split('\n')
      .map((line) => line.replace(/\r$/, ''))
      .filter((line) => line !== '');
    const body =
      lines.length === 2 && lines[0]?.startsWith(UNTRUSTED) === true
        ? lines[1]
        : lines.length === 1
          ? lines[0]
          : undefined;
    const bytes = body === undefined ? null : strictBase64(body);
    if (
      bytes === null ||
      bytes.length !== 2 + KEY_ID_BYTES + 32 ||
      bytes.subarray(0, 2).toString('latin1') !== ALG_LEGACY
    )
      return t.failure(
        u,
        c,
        'not a minisign public key ("untrusted comment: …" then one base64 line of 42 bytes starting "Ed")',
      );
    const key = ed25519PublicKey(bytes.subarray(2 + KEY_ID_BYTES));
    if (key === null) return t.failure(u, c, 'the public key bytes are not an Ed25519 key');
    return t.success({ keyId: Buffer.from(bytes.subarray(2, 2 + KEY_ID_BYTES)), key });
  },
  () => {
    throw new Error('a MinisignPublicKey is decoded, never encoded back');
  },
);

function signatureLines(text: string): readonly [string, string, string, string] | null {
  const lines = text.split('\n').map((line) => line.replace(/\r$/, ''));
  while (lines.length > 4 && lines[lines.length - 1] === '') lines.pop();
  const [untrusted, sig, trusted, global] = lines;
  if (
    lines.length !== 4 ||
    untrusted === undefined ||
    sig === undefined ||
    trusted === undefined ||
    global === undefined
  )
    return null;
  if (!untrusted.startsWith(UNTRUSTED) || !trusted.startsWith(TRUSTED)) return null;
  return [untrusted, sig, trusted, global];
}

/** A `.minisig` file: four lines, the signature line 74 bytes, the global signature 64. */
export const MinisignSignatureText = new t.Type<MinisignSignature, string, unknown>(
  'MinisignSignature',
  (u): u is MinisignSignature => typeof u === 'object' && u !== null && 'globalSignature' in u,
  (u, c) => {
    const lines = typeof u === 'string' ? signatureLines(u) : null;
    if (lines === null)
      return t.failure(
        u,
        c,
        'not a minisign signature (4 lines: untrusted comment, signature, trusted comment, global signature)',
      );
    const sig = strictBase64(lines[1]);
    const global = strictBase64(lines[3]);
    const algorithm = sig?.subarray(0, 2).toString('latin1');
    if (
      sig === null ||
      sig.length !== 2 + KEY_ID_BYTES + 64 ||
      (algorithm !== ALG_PREHASHED && algorithm !== ALG_LEGACY)
    )
      return t.failure(u, c, 'the signature line is not base64 of 74 bytes starting "ED" or "Ed"');
    if (global === null || global.length !== 64)
      return t.failure(u, c, 'the global signature line is not base64 of 64 bytes');
    return t.success({
      algorithm,
      keyId: Buffer.from(sig.subarray(2, 2 + KEY_ID_BYTES)),
      signature: Buffer.from(sig.subarray(2 + KEY_ID_BYTES)),
      trustedComment: lines[2].slice(TRUSTED.length),
      globalSignature: global,
    });
  },
  () => {
    throw new Error('a MinisignSignature is decoded, never encoded back');
  },
);

const blake2b512 = (data: Uint8Array): Buffer => createHash('blake2b512').update(data).digest();

const failed = (reason: VerifyFailure, message: string): Verified => ({ _tag: 'Left', left: { reason, message } });

function decodeMessage(result: t.Validation<unknown>): string {
  if (result._tag === 'Right') return '';
  return result.left.map((e) => e.message ?? 'invalid').join('; ');
}

/** Checks `file` against a `.minisig` text and a public key text; every refusal names its reason. */
export function verifyMinisign(file: Uint8Array, signatureText: string, publicKeyText: string): Verified {
  const publicKey = MinisignPublicKeyText.decode(publicKeyText);
  if (publicKey._tag === 'Left') return failed('bad-public-key', `${decodeMessage(publicKey)}: check --pubkey`);
  const parsed = MinisignSignatureText.decode(signatureText);
  if (parsed._tag === 'Left')
    return failed('bad-signature-file', `${decodeMessage(parsed)}: download the .minisig file again`);
  const sig = parsed.right;
  const key = publicKey.right;
  if (!sig.keyId.equals(key.keyId))
    return failed(
      'wrong-key',
      `signed by key ${keyIdHex(sig.keyId)}, not by the given key ${keyIdHex(key.keyId)}: use the release key, or distrust the file`,
    );
  const message = sig.algorithm === ALG_PREHASHED ? blake2b512(file) : file;
  if (!verify(null, message, key.key, sig.signature))
    return failed(
      'bad-signature',
      'the signature does not match the file: it was changed after signing; do not install it',
    );
  const signedComment = Buffer.concat([sig.signature, Buffer.from(sig.trustedComment, 'utf8')]);
  if (!verify(null, signedComment, key.key, sig.globalSignature))
    return failed('bad-trusted-comment', 'the trusted comment was changed after signing; do not install it');
  return { _tag: 'Right', right: { trustedComment: sig.trustedComment, keyId: keyIdHex(key.keyId) } };
}

export interface SigningKey {
  readonly keyId: Buffer;
  readonly privateKey: KeyObject;
  /** The public key file, in minisign's format. */
  readonly publicKeyText: string;
}

function publicKeyText(keyId: Buffer, privateKey: KeyObject): string {
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  const raw = Buffer.from(String(jwk.x), 'base64url');
  const body = Buffer.concat([Buffer.from(ALG_LEGACY, 'latin1'), keyId, raw]).toString('base64');
  return `${UNTRUSTED}minisign public key ${keyIdHex(keyId)}\n${body}\n`;
}

/** A signing key from a PKCS#8 PEM Ed25519 private key and its 8-byte key id (hex, as minisign prints it). */
export function signingKeyFromPem(pem: string, keyIdText: string): SigningKey {
  if (!/^[0-9A-Fa-f]{16}$/.test(keyIdText)) throw new Error('a key id is 16 hex digits');
  const keyId = Buffer.from(keyIdText, 'hex').reverse();
  const privateKey = createPrivateKey(pem);
  return { keyId, privateKey, publicKeyText: publicKeyText(keyId, privateKey) };
}

/** A new key pair; the key id comes from the public key's hash, so it needs no randomness of its own. */
export function generateSigningKey(): { readonly key: SigningKey; readonly pem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(String(publicKey.export({ format: 'jwk' }).x), 'base64url');
  const keyId = createHash('sha256').update(raw).digest().subarray(0, KEY_ID_BYTES);
  const pem = String(privateKey.export({ format: 'pem', type: 'pkcs8' }));
  return { key: { keyId, privateKey, publicKeyText: publicKeyText(keyId, privateKey) }, pem };
}

/** A `.minisig` for `file` (prehashed, as minisign signs by default). */
export function signMinisign(file: Uint8Array, key: SigningKey, trustedComment: string): string {
  if (trustedComment.includes('\n')) throw new Error('a trusted comment is one line');
  const signature = sign(null, blake2b512(file), key.privateKey);
  const global = sign(null, Buffer.concat([signature, Buffer.from(trustedComment, 'utf8')]), key.privateKey);
  const sigLine = Buffer.concat([Buffer.from(ALG_PREHASHED, 'latin1'), key.keyId, signature]).toString('base64');
  return `${UNTRUSTED}signature from crustcore secret key\n${sigLine}\n${TRUSTED}${trustedComment}\n${global.toString('base64')}\n`;
}
