/**
 * scripts/install.sh (issue #17 item 7): it checks the release's signature
 * and every tarball's SHA-256 before npm runs, then installs a working
 * `crustcore` bin. The control is the untouched release, which installs and
 * answers --version; each attack is a copy of it with one thing changed, and
 * must stop with exit 6 before anything is installed.
 */
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { checksumList, sha256Hex } from '../packages/crustcore/src/release/checksums.js';
import { generateSigningKey, signingKeyFromPem, signMinisign } from '../packages/crustcore/src/release/minisign.js';
import { buildCli, REPO_ROOT } from './cli-harness.js';

const INSTALL = join(REPO_ROOT, 'scripts/install.sh');
let work: string;
let release: string;

interface Outcome {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function install(from: string, pubkey: string, prefix: string): Promise<Outcome> {
  return new Promise((done) => {
    const child = execFile(
      'bash',
      [INSTALL, '--from', from, '--pubkey', pubkey, '--prefix', prefix],
      { encoding: 'utf8', env: { ...process.env, HOME: work } },
      (_error, stdout, stderr) => done({ code: child.exitCode, stdout, stderr }),
    );
  });
}

/** A copy of the signed release for one attack. */
function copyOfRelease(name: string): string {
  const dir = join(work, name);
  cpSync(release, dir, { recursive: true });
  return dir;
}

function flipByte(path: string, index: number): void {
  const bytes = readFileSync(path);
  bytes[index] = (bytes[index] ?? 0) ^ 0x01;
  writeFileSync(path, bytes);
}

beforeAll(() => {
  buildCli();
  work = realpathSync(mkdtempSync(join(tmpdir(), 'crustcore-install-sh-')));
  execFileSync(
    process.execPath,
    ['--conditions=source', '--import', 'tsx', 'xtask/main.ts', 'release-keygen', '--out', join(work, 'key')],
    { cwd: REPO_ROOT, stdio: 'pipe' },
  );
  const keyId = readFileSync(join(work, 'key', 'crustcore.key-id'), 'utf8').trim();
  release = join(work, 'release');
  execFileSync(
    process.execPath,
    [
      '--conditions=source',
      '--import',
      'tsx',
      'xtask/main.ts',
      'release',
      '--no-build',
      '--out',
      release,
      '--key',
      join(work, 'key', 'crustcore.key'),
      '--key-id',
      keyId,
    ],
    { cwd: REPO_ROOT, stdio: 'pipe' },
  );
}, 120_000);

describe('scripts/install.sh', () => {
  it('installs the signed release (the control) and the bin answers --version', async () => {
    const prefix = join(work, 'good');
    const outcome = await install(release, join(release, 'crustcore.pub'), prefix);
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
    expect(execFileSync(join(prefix, 'bin', 'crustcore'), ['--version'], { encoding: 'utf8' }).trim()).toBe(
      'crustcore 0.1.0',
    );
  }, 300_000);

  it('refuses a tarball with one byte flipped, whichever tarball and wherever the byte', async () => {
    for (const [name, index] of [
      ['crustcore-0.1.0.tgz', 0],
      ['crustcore-kernel-0.1.0.tgz', 100],
      ['crustcore-state-0.1.0.tgz', -1],
    ] as const) {
      const dir = copyOfRelease(`flip-${name}`);
      const path = join(dir, name);
      flipByte(path, index < 0 ? readFileSync(path).length + index : index);
      const prefix = join(dir, 'prefix');
      const outcome = await install(dir, join(release, 'crustcore.pub'), prefix);
      expect(outcome.code, name).toBe(6);
      expect(outcome.stderr).toContain('does not match the signed SHA256SUMS');
      expect(existsSync(join(prefix, 'lib'))).toBe(false);
    }
  });

  it('refuses a checksum list edited to match a changed tarball, which sha256sum alone accepts (control)', async () => {
    const dir = copyOfRelease('edited-sums');
    flipByte(join(dir, 'crustcore-0.1.0.tgz'), 10);
    const sums = readFileSync(join(dir, 'SHA256SUMS'), 'utf8').replace(
      /^[0-9a-f]{64}(?= {2}crustcore-0\.1\.0\.tgz$)/m,
      sha256Hex(readFileSync(join(dir, 'crustcore-0.1.0.tgz'))),
    );
    writeFileSync(join(dir, 'SHA256SUMS'), sums);
    execFileSync('sha256sum', ['--check', '--strict', '--quiet', 'SHA256SUMS'], { cwd: dir });
    const outcome = await install(dir, join(release, 'crustcore.pub'), join(dir, 'prefix'));
    expect(outcome.code).toBe(6);
    expect(outcome.stderr).toContain('the signature does not match SHA256SUMS');
    expect(existsSync(join(dir, 'prefix', 'lib'))).toBe(false);
  });

  it('refuses a release re-signed by another key, and a truncated or comment-edited signature', async () => {
    const other = generateSigningKey().key;
    const resigned = copyOfRelease('other-key');
    writeFileSync(
      join(resigned, 'SHA256SUMS.minisig'),
      signMinisign(readFileSync(join(resigned, 'SHA256SUMS')), other, 'x'),
    );
    const truncated = copyOfRelease('truncated');
    const sig = readFileSync(join(truncated, 'SHA256SUMS.minisig'), 'utf8');
    writeFileSync(join(truncated, 'SHA256SUMS.minisig'), sig.slice(0, sig.length - 20));
    const comment = copyOfRelease('comment');
    writeFileSync(join(comment, 'SHA256SUMS.minisig'), sig.replace('\ntrusted comment: ', '\ntrusted comment: evil '));
    for (const dir of [resigned, truncated, comment]) {
      const outcome = await install(dir, join(release, 'crustcore.pub'), join(dir, 'prefix'));
      expect(outcome.code, dir).toBe(6);
      expect(outcome.stderr).toContain('refused');
      expect(existsSync(join(dir, 'prefix', 'lib'))).toBe(false);
    }
  });

  it('refuses a signed list that names a file outside the release directory', async () => {
    const dir = copyOfRelease('traversal');
    const key = signingKeyFromPem(
      readFileSync(join(work, 'key', 'crustcore.key'), 'utf8'),
      readFileSync(join(work, 'key', 'crustcore.key-id'), 'utf8').trim(),
    );
    const tarball = readFileSync(join(dir, 'crustcore-0.1.0.tgz'));
    for (const name of ['../crustcore-0.1.0.tgz', 'sub/crustcore-0.1.0.tgz', '.crustcore-0.1.0.tgz']) {
      const list = checksumList([
        { name: 'crustcore-0.1.0.tgz', data: tarball },
        { name, data: tarball },
      ]);
      writeFileSync(join(dir, 'SHA256SUMS'), list);
      writeFileSync(join(dir, 'SHA256SUMS.minisig'), signMinisign(Buffer.from(list), key, 'file:SHA256SUMS'));
      const outcome = await install(dir, join(release, 'crustcore.pub'), join(dir, 'prefix'));
      expect(outcome.code, name).toBe(6);
      expect(outcome.stderr).toContain('not a plain file name');
    }
  });
});
