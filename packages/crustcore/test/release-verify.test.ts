/**
 * Release signatures (issue #17 item 7): minisign-format Ed25519 signatures
 * and the signed SHA256SUMS, checked by `crustcore release verify` with
 * node:crypto only. Signed by the real `minisign` when it is installed, and
 * always by our own signer (minisign is not packaged on every machine).
 * Every attack has a control: the untampered input passes the same check,
 * and where a weaker check would be fooled, the test shows that it would.
 */
import { execFileSync } from 'node:child_process';
import { createHash, verify as edVerify } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { type Io, makeStyle } from '../src/cli/output.js';
import { releaseCommand } from '../src/commands/release.js';
import { checkListed, checksumList, sha256Hex } from '../src/release/checksums.js';
import {
  generateSigningKey,
  keyIdHex,
  MinisignPublicKeyText,
  MinisignSignatureText,
  signMinisign,
  verifyMinisign,
} from '../src/release/minisign.js';

interface Signed {
  readonly signer: string;
  readonly file: Buffer;
  readonly sig: string;
  readonly pubkey: string;
}

const ARTIFACT = Buffer.from(`crustcore release tarball bytes\n${'x'.repeat(3000)}\n`);

function minisignAvailable(): boolean {
  try {
    execFileSync('sh', ['-c', 'command -v minisign'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The real minisign: a passwordless key (-W), a prehashed signature (its default). */
function signWithMinisign(file: Buffer): Signed {
  const dir = mkdtempSync(join(tmpdir(), 'crustcore-minisign-'));
  const path = join(dir, 'artifact.tgz');
  writeFileSync(path, file);
  execFileSync('minisign', ['-G', '-W', '-p', join(dir, 'key.pub'), '-s', join(dir, 'key.sec')], { stdio: 'ignore' });
  execFileSync('minisign', ['-S', '-s', join(dir, 'key.sec'), '-m', path, '-t', 'timestamp:1 file:artifact.tgz'], {
    stdio: 'ignore',
  });
  return {
    signer: 'minisign',
    file,
    sig: readFileSync(`${path}.minisig`, 'utf8'),
    pubkey: readFileSync(join(dir, 'key.pub'), 'utf8'),
  };
}

function signWithNode(file: Buffer, comment = 'timestamp:1 file:artifact.tgz'): Signed {
  const { key } = generateSigningKey();
  return { signer: 'node:crypto', file, sig: signMinisign(file, key, comment), pubkey: key.publicKeyText };
}

const signers: ReadonlyArray<() => Signed> = [
  () => signWithNode(ARTIFACT),
  ...(minisignAvailable() ? [() => signWithMinisign(ARTIFACT)] : []),
];

const reasonOf = (file: Buffer, sig: string, pubkey: string): string => {
  const result = verifyMinisign(file, sig, pubkey);
  return result._tag === 'Right' ? 'verified' : result.left.reason;
};

/** Flips one bit of the byte at `index` of a base64 line's decoded bytes and re-encodes it. */
function flipDecodedByte(sig: string, lineIndex: number, index: number): string {
  const lines = sig.split('\n');
  const bytes = Buffer.from(lines[lineIndex] ?? '', 'base64');
  bytes[index] = (bytes[index] ?? 0) ^ 0x01;
  lines[lineIndex] = bytes.toString('base64');
  return lines.join('\n');
}

describe.each(signers.map((make) => [make().signer, make] as const))('signed by %s', (_name, make) => {
  const signed = make();

  it('verifies (the control for every attack below)', () => {
    expect(reasonOf(signed.file, signed.sig, signed.pubkey)).toBe('verified');
    // The key's base64 line alone works too, as `minisign -P` takes it.
    expect(reasonOf(signed.file, signed.sig, signed.pubkey.trim().split('\n')[1] ?? '')).toBe('verified');
  });

  it('refuses the file with any one byte flipped (first, middle, last, every 97th)', () => {
    const positions = [0, Math.floor(signed.file.length / 2), signed.file.length - 1];
    for (let i = 1; i < signed.file.length; i += 97) positions.push(i);
    for (const position of positions) {
      const tampered = Buffer.from(signed.file);
      tampered[position] = (tampered[position] ?? 0) ^ 0x20;
      expect(reasonOf(tampered, signed.sig, signed.pubkey), `byte ${position}`).toBe('bad-signature');
    }
    // Appending or dropping a byte is refused the same way.
    expect(reasonOf(Buffer.concat([signed.file, Buffer.from('\n')]), signed.sig, signed.pubkey)).toBe('bad-signature');
    expect(reasonOf(signed.file.subarray(0, -1), signed.sig, signed.pubkey)).toBe('bad-signature');
  });

  it('refuses a signature with any one byte flipped, in the key id, the signature or the global signature', () => {
    for (let index = 2; index < 74; index += 1) {
      const reason = reasonOf(signed.file, flipDecodedByte(signed.sig, 1, index), signed.pubkey);
      expect(reason, `signature byte ${index}`).toBe(index < 10 ? 'wrong-key' : 'bad-signature');
    }
    for (let index = 0; index < 64; index += 1)
      expect(reasonOf(signed.file, flipDecodedByte(signed.sig, 3, index), signed.pubkey), `global byte ${index}`).toBe(
        'bad-trusted-comment',
      );
    // The algorithm bytes: an unknown algorithm is not a signature at all.
    expect(reasonOf(signed.file, flipDecodedByte(signed.sig, 1, 0), signed.pubkey)).toBe('bad-signature-file');
  });

  it('refuses a signature made by another key, whose own key accepts it (control)', () => {
    const other = signWithNode(signed.file);
    expect(reasonOf(other.file, other.sig, other.pubkey)).toBe('verified');
    expect(reasonOf(signed.file, other.sig, signed.pubkey)).toBe('wrong-key');
    // The same key id with another key's bytes: still refused, by the signature itself.
    const forgedId = other.sig.split('\n');
    const ours = Buffer.from(signed.sig.split('\n')[1] ?? '', 'base64');
    const theirs = Buffer.from(forgedId[1] ?? '', 'base64');
    ours.copy(theirs, 2, 2, 10);
    forgedId[1] = theirs.toString('base64');
    expect(reasonOf(signed.file, forgedId.join('\n'), signed.pubkey)).toBe('bad-signature');
  });

  it('refuses a tampered trusted comment, which a check of the file signature alone would accept (control)', () => {
    const lines = signed.sig.split('\n');
    const comment = lines[2] ?? '';
    const variants = [
      `${comment} file:evil.tgz`,
      comment.replace('timestamp:', 'timestamp:9'),
      comment.replace('file:', 'fіle:'), // a Cyrillic і
      `${comment} `,
      comment.slice(0, -1),
    ];
    const parsed = MinisignSignatureText.decode(signed.sig);
    const key = MinisignPublicKeyText.decode(signed.pubkey);
    if (parsed._tag === 'Left' || key._tag === 'Left') throw new Error('the control input must parse');
    const fileSignatureHolds = edVerify(
      null,
      createHash('blake2b512').update(signed.file).digest(),
      key.right.key,
      parsed.right.signature,
    );
    expect(fileSignatureHolds).toBe(true);
    for (const variant of variants) {
      const tampered = [lines[0], lines[1], variant, lines[3], ''].join('\n');
      expect(reasonOf(signed.file, tampered, signed.pubkey), variant).toBe('bad-trusted-comment');
    }
  });

  it('refuses a truncated signature file at every length', () => {
    const full = signed.sig.trimEnd();
    for (let length = 0; length < full.length; length += 1) {
      const reason = reasonOf(signed.file, full.slice(0, length), signed.pubkey);
      expect(reason, `first ${length} characters`).not.toBe('verified');
    }
    expect(reasonOf(signed.file, full, signed.pubkey)).toBe('verified');
  });
});

describe('the formats', () => {
  it("reads a public key minisign wrote (minisign's own release key) and prints its key id as minisign does", () => {
    const key = MinisignPublicKeyText.decode(
      'untrusted comment: minisign public key E7620F1842B4E81F\nRWQf6LRCGA9i53mlYecO4IzT51TGPpvWucNSCh1CBM0QTaLn73Y7GFO3\n',
    );
    if (key._tag === 'Left') throw new Error('a real minisign key must decode');
    expect(keyIdHex(key.right.keyId)).toBe('E7620F1842B4E81F');
  });

  it('leaves the untrusted comment unchecked, as minisign does (only the trusted one is signed)', () => {
    const signed = signWithNode(ARTIFACT);
    const edited = signed.sig.replace(/^untrusted comment: .*$/m, 'untrusted comment: anything at all');
    expect(edited).not.toBe(signed.sig);
    expect(reasonOf(signed.file, edited, signed.pubkey)).toBe('verified');
  });
});

describe('the signed checksum list', () => {
  const tarball = Buffer.from('the crustcore 0.1.0 tarball');
  const other = Buffer.from('the kernel tarball');

  it('accepts a tarball listed by its own name with its own hash (control)', () => {
    const list = checksumList([
      { name: 'crustcore-0.1.0.tgz', data: tarball },
      { name: 'crustcore-kernel-0.1.0.tgz', data: other },
    ]);
    expect(checkListed(list, 'crustcore-0.1.0.tgz', tarball)._tag).toBe('Right');
  });

  it('refuses a list that carries the hash under another name, though its signature and the hash are good', () => {
    const { key } = generateSigningKey();
    const names = ['crustcore-0.0.9.tgz', './crustcore-0.1.0.tgz', 'CRUSTCORE-0.1.0.tgz', 'dist/crustcore-0.1.0.tgz'];
    for (const name of names) {
      const list = checksumList([{ name, data: tarball }]);
      const sig = signMinisign(Buffer.from(list), key, `file:SHA256SUMS`);
      // Control: the list is authentic and holds the tarball's hash — a hash-only check would pass.
      expect(reasonOf(Buffer.from(list), sig, key.publicKeyText)).toBe('verified');
      expect(list).toContain(sha256Hex(tarball));
      const listed = checkListed(list, 'crustcore-0.1.0.tgz', tarball);
      expect(listed._tag, name).toBe('Left');
    }
  });

  it('refuses the right name with another hash, a malformed line and a duplicated name', () => {
    const list = checksumList([{ name: 'crustcore-0.1.0.tgz', data: other }]);
    expect(checkListed(list, 'crustcore-0.1.0.tgz', tarball)._tag).toBe('Left');
    const good = `${sha256Hex(tarball)}  crustcore-0.1.0.tgz\n`;
    expect(checkListed(good, 'crustcore-0.1.0.tgz', tarball)._tag).toBe('Right');
    expect(checkListed(good.toUpperCase(), 'crustcore-0.1.0.tgz', tarball)._tag).toBe('Left');
    expect(checkListed(`${good}${good}`, 'crustcore-0.1.0.tgz', tarball)._tag).toBe('Left');
    expect(checkListed('', 'crustcore-0.1.0.tgz', tarball)._tag).toBe('Left');
  });
});

function testIo(): { io: Io; out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk) => (out += String(chunk)));
  stderr.on('data', (chunk) => (err += String(chunk)));
  const env = { NO_COLOR: '1' };
  const io: Io = {
    stdout,
    stderr,
    stdin: new PassThrough(),
    env,
    cwd: tmpdir(),
    out: makeStyle(stdout, env),
    err: makeStyle(stderr, env),
  };
  return { io, out: () => out, err: () => err };
}

describe('crustcore release verify', () => {
  const dir = mkdtempSync(join(tmpdir(), 'crustcore-release-verify-'));
  const { key } = generateSigningKey();
  const tarball = join(dir, 'crustcore-0.1.0.tgz');
  writeFileSync(tarball, ARTIFACT);
  const sums = join(dir, 'SHA256SUMS');
  writeFileSync(sums, checksumList([{ name: 'crustcore-0.1.0.tgz', data: ARTIFACT }]));
  writeFileSync(`${sums}.minisig`, signMinisign(readFileSync(sums), key, 'file:SHA256SUMS'));
  writeFileSync(`${tarball}.minisig`, signMinisign(ARTIFACT, key, 'file:crustcore-0.1.0.tgz'));
  writeFileSync(join(dir, 'key.pub'), key.publicKeyText);

  it('exits 0 for a good signature over the file, and over the list that names it', async () => {
    const direct = testIo();
    expect(
      await releaseCommand.run(
        ['verify', tarball, '--sig', `${tarball}.minisig`, '--pubkey', join(dir, 'key.pub')],
        direct.io,
      ),
    ).toBe(0);
    expect(direct.out()).toContain('✓ verified crustcore-0.1.0.tgz');
    const listed = testIo();
    const args = ['verify', tarball, '--sums', sums, '--sig', `${sums}.minisig`, '--pubkey', join(dir, 'key.pub')];
    expect(await releaseCommand.run(args, listed.io)).toBe(0);
  });

  it('exits 6 with the reason when the file changed, and 6 when the list does not name it', async () => {
    const changed = join(dir, 'changed', 'crustcore-0.1.0.tgz');
    execFileSync('mkdir', ['-p', join(dir, 'changed')]);
    writeFileSync(changed, Buffer.concat([ARTIFACT, Buffer.from('!')]));
    const direct = testIo();
    expect(
      await releaseCommand.run(
        ['verify', changed, '--sig', `${tarball}.minisig`, '--pubkey', join(dir, 'key.pub')],
        direct.io,
      ),
    ).toBe(6);
    expect(direct.err()).toContain('bad-signature');
    const renamed = join(dir, 'crustcore-0.1.1.tgz');
    writeFileSync(renamed, ARTIFACT);
    const listed = testIo();
    const args = ['verify', renamed, '--sums', sums, '--sig', `${sums}.minisig`, '--pubkey', join(dir, 'key.pub')];
    expect(await releaseCommand.run(args, listed.io)).toBe(6);
    expect(listed.err()).toContain('not in the checksum list');
  });
});
