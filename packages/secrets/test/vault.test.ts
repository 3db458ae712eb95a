import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeStoreError, FileVault, type VaultKeySource } from '../src/index.js';
import { openVault as openVaultBytes, parseVaultEnvelope } from '../src/vault/format.js';
import { deriveScryptKey } from '../src/vault/key.js';
import { handleOf, materialOf } from './helpers.js';

/** The cheapest scrypt cost the header accepts: tests exercise the format, not the cost. */
const FAST_SCRYPT = { N: 1024, r: 8, p: 1 };

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'crustcore-vault-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const passphrase = (text: string): VaultKeySource => ({
  kind: 'passphrase',
  passphrase: materialOf(text),
  scrypt: FAST_SCRYPT,
});

async function openVault(path: string, key: VaultKeySource): Promise<FileVault> {
  const opened = await FileVault.open({ path, key });
  if (opened._tag === 'Left') throw new Error(describeStoreError(opened.left));
  return opened.right;
}

describe('FileVault', () => {
  it('round-trips secrets with a passphrase; the file holds no plaintext', async () => {
    const path = join(dir, 'vault');
    const vault = await openVault(path, passphrase('correct horse battery'));
    expect((await vault.list())._tag === 'Right').toBe(true);
    expect(await vault.set(handleOf('GITHUB_TOKEN', 'GitHub'), materialOf('gh-secret-value-0001'))).toEqual({
      _tag: 'Right',
      right: undefined,
    });
    await vault.set(handleOf('NPM_TOKEN'), materialOf('npm-secret-value-0002'));
    const got = await vault.get(handleOf('GITHUB_TOKEN'));
    expect(got._tag === 'Right' && got.right.expose()).toBe('gh-secret-value-0001');
    const listed = await vault.list();
    expect(listed._tag === 'Right' && listed.right.map((s) => `${s.handle.uri} ${s.handle.label}`)).toEqual([
      'secret://GITHUB_TOKEN GitHub',
      'secret://NPM_TOKEN NPM_TOKEN',
    ]);
    const bytes = await readFile(path);
    expect(bytes.subarray(0, 8).toString()).toBe('CRUSTVLT');
    expect(bytes.includes('gh-secret-value-0001')).toBe(false);
    expect(bytes.includes('GITHUB_TOKEN')).toBe(false);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await vault.remove(handleOf('NPM_TOKEN')))._tag === 'Right').toBe(true);
    expect(await vault.remove(handleOf('NPM_TOKEN'))).toEqual({ _tag: 'Right', right: false });
    const missing = await vault.get(handleOf('NPM_TOKEN'));
    expect(missing).toEqual({ _tag: 'Left', left: { _tag: 'SecretNotFound', uri: 'secret://NPM_TOKEN' } });
    vault.close();

    const reopened = await openVault(path, passphrase('correct horse battery'));
    const again = await reopened.get(handleOf('GITHUB_TOKEN'));
    expect(again._tag === 'Right' && again.right.expose()).toBe('gh-secret-value-0001');
    const header = JSON.parse(bytes.toString('utf8', 14, 14 + bytes.readUInt32BE(10)));
    expect(header.kdf).toMatchObject({ kind: 'scrypt', N: 1024, r: 8, p: 1 });
    expect(header.cipher).toBe('aes-256-gcm');
  });

  it('a wrong passphrase is VaultWrongKey, never a partial read', async () => {
    const path = join(dir, 'vault');
    const vault = await openVault(path, passphrase('right one'));
    await vault.set(handleOf('A'), materialOf('value-a-123456'));
    const wrong = await FileVault.open({ path, key: passphrase('wrong one') });
    expect(wrong).toEqual({ _tag: 'Left', left: { _tag: 'VaultWrongKey' } });
    const other = await FileVault.open({
      path,
      key: { kind: 'key-file', path: join(dir, 'k'), createIfMissing: true },
    });
    expect(other).toEqual({ _tag: 'Left', left: { _tag: 'VaultKeyKindMismatch', vaultKey: 'passphrase' } });
  });

  it('any flipped byte or truncation is a typed error and reveals nothing', async () => {
    const path = join(dir, 'vault');
    const vault = await openVault(path, passphrase('pw'));
    await vault.set(handleOf('A'), materialOf('value-a-123456'));
    const good = await readFile(path);
    // Exhaustively in memory (the same functions the vault runs on the file's bytes)…
    const key = await deriveScryptKey(
      materialOf('pw'),
      JSON.parse(good.toString('utf8', 14, 14 + good.readUInt32BE(10))).kdf,
    );
    const decode = (bytes: Buffer) => {
      const envelope = parseVaultEnvelope(bytes);
      return envelope._tag === 'Left' ? envelope : openVaultBytes(key, envelope.right);
    };
    expect(decode(good)._tag).toBe('Right');
    const tags = new Set<string>();
    for (let at = 0; at < good.length; at++) {
      for (const mask of [0x01, 0x80]) {
        const bad = Buffer.from(good);
        bad[at] = (bad[at] ?? 0) ^ mask;
        const result = decode(bad);
        expect(result._tag, `byte ${at}`).toBe('Left');
        if (result._tag === 'Left') tags.add(result.left._tag);
      }
    }
    for (let length = 0; length < good.length; length++) expect(decode(good.subarray(0, length))._tag).toBe('Left');
    expect([...tags].sort()).toEqual(['VaultCorrupt', 'VaultUnsupportedVersion', 'VaultWrongKey']);
    // …and through the file, for a sample of positions.
    for (const at of [0, 9, 20, good.length - 40, good.length - 1]) {
      const bad = Buffer.from(good);
      bad[at] = (bad[at] ?? 0) ^ 0x01;
      await writeFile(path, bad);
      const result = await vault.get(handleOf('A'));
      expect(result._tag, `byte ${at}`).toBe('Left');
      expect(JSON.stringify(result)).not.toContain('value-a');
    }
    await writeFile(path, good);
    expect((await vault.get(handleOf('A')))._tag).toBe('Right');
  });

  it('refuses other format versions with a typed error', async () => {
    const path = join(dir, 'vault');
    const vault = await openVault(path, passphrase('pw'));
    await vault.set(handleOf('A'), materialOf('value-a-123456'));
    const bytes = await readFile(path);
    bytes.writeUInt16BE(2, 8);
    await writeFile(path, bytes);
    expect(await FileVault.open({ path, key: passphrase('pw') })).toEqual({
      _tag: 'Left',
      left: { _tag: 'VaultUnsupportedVersion', version: 2 },
    });
  });

  it('refuses a header whose scrypt cost would exhaust the machine', async () => {
    const path = join(dir, 'vault');
    const vault = await openVault(path, passphrase('pw'));
    await vault.set(handleOf('A'), materialOf('value-a-123456'));
    const bytes = await readFile(path);
    const length = bytes.readUInt32BE(10);
    const header = bytes.toString('utf8', 14, 14 + length).replace('"N":1024', '"N":4194304');
    const rebuilt = Buffer.concat([
      bytes.subarray(0, 10),
      Buffer.alloc(4),
      Buffer.from(header),
      bytes.subarray(14 + length),
    ]);
    rebuilt.writeUInt32BE(Buffer.byteLength(header), 10);
    await writeFile(path, rebuilt);
    const opened = await FileVault.open({ path, key: passphrase('pw') });
    expect(opened._tag === 'Left' && opened.left._tag).toBe('VaultCorrupt');
  });

  it('key file: created 0600 on first use, reused, refused when looser or malformed', async () => {
    const keyPath = join(dir, 'keys', 'vault.key');
    const path = join(dir, 'vault');
    const vault = await openVault(path, { kind: 'key-file', path: keyPath, createIfMissing: true });
    await vault.set(handleOf('A'), materialOf('value-a-123456'));
    expect((await stat(keyPath)).mode & 0o777).toBe(0o600);
    expect((await readFile(keyPath, 'utf8')).trim()).toMatch(/^[0-9a-f]{64}$/);
    const again = await openVault(path, { kind: 'key-file', path: keyPath });
    expect((await again.get(handleOf('A')))._tag).toBe('Right');

    await chmod(keyPath, 0o640);
    const loose = await FileVault.open({ path, key: { kind: 'key-file', path: keyPath } });
    expect(loose).toEqual({ _tag: 'Left', left: { _tag: 'KeyFileTooOpen', path: keyPath, mode: '0640' } });
    await chmod(keyPath, 0o600);

    const missing = await FileVault.open({ path, key: { kind: 'key-file', path: join(dir, 'none') } });
    expect(missing._tag === 'Left' && missing.left._tag).toBe('KeyFileMissing');

    const otherKey = join(dir, 'other.key');
    await writeFile(otherKey, `${'ab'.repeat(32)}\n`, { mode: 0o600 });
    expect(await FileVault.open({ path, key: { kind: 'key-file', path: otherKey } })).toEqual({
      _tag: 'Left',
      left: { _tag: 'VaultWrongKey' },
    });
    const malformed = join(dir, 'bad.key');
    await writeFile(malformed, 'not hex\n', { mode: 0o600 });
    const bad = await FileVault.open({ path, key: { kind: 'key-file', path: malformed } });
    expect(bad._tag === 'Left' && bad.left._tag).toBe('KeyFileMalformed');
  });

  it('writes atomically: no temporary files remain, stale ones of dead writers are removed', async () => {
    const path = join(dir, 'vault');
    const vault = await openVault(path, passphrase('pw'));
    await writeFile(join(dir, '.vault.999999999.deadbeef.tmp'), 'half-written');
    await Promise.all(
      Array.from({ length: 10 }, (_, i) => vault.set(handleOf(`K${i}`), materialOf(`value-${i}-abcdefgh`))),
    );
    expect((await readdir(dir)).sort()).toEqual(['vault']);
    const listed = await vault.list();
    expect(listed._tag === 'Right' && listed.right.length).toBe(10);
  });

  it('a closed vault refuses further use', async () => {
    const vault = await openVault(join(dir, 'vault'), passphrase('pw'));
    vault.close();
    const after = await vault.list();
    expect(after._tag === 'Left' && after.left._tag).toBe('VaultIoError');
    expect(String(vault)).toBe(`FileVault(${join(dir, 'vault')})`);
  });
});
