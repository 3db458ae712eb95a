/**
 * `xtask release`: the release artifacts, in one directory.
 *   npm run xtask -- release [--out DIR] [--no-build] [--key PKCS8.pem --key-id HEX16]
 * Builds every package with its type declarations (`npm run build:types`,
 * unless --no-build: the tests pack what setup.sh built), packs each publishable workspace
 * with `npm pack` into DIR (default release/), writes SHA256SUMS (the
 * `sha256sum` format) and, with a key, signs it: SHA256SUMS.minisig
 * (minisign's documented format, for `minisign -Vm SHA256SUMS -p crustcore.pub`)
 * and crustcore.pub. `npm run xtask -- release-keygen --out DIR` makes a key.
 * Prints the directory's files, one per line.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { checksumList } from '../packages/crustcore/src/release/checksums.js';
import {
  generateSigningKey,
  keyIdHex,
  signingKeyFromPem,
  signMinisign,
} from '../packages/crustcore/src/release/minisign.js';

const ROOT = resolve(import.meta.dirname, '..');

interface PackResult {
  readonly filename: string;
}

function packAll(out: string): string[] {
  const json = execFileSync('npm', ['pack', '--workspaces', '--json', '--pack-destination', out], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return (JSON.parse(json) as PackResult[]).map((entry) => entry.filename);
}

function sign(out: string, keyPath: string, keyIdText: string): void {
  const key = signingKeyFromPem(readFileSync(keyPath, 'utf8'), keyIdText);
  const sums = readFileSync(join(out, 'SHA256SUMS'));
  const version = (
    JSON.parse(readFileSync(join(ROOT, 'packages/crustcore/package.json'), 'utf8')) as { version: string }
  ).version;
  writeFileSync(join(out, 'SHA256SUMS.minisig'), signMinisign(sums, key, `crustcore ${version} file:SHA256SUMS`));
  writeFileSync(join(out, 'crustcore.pub'), key.publicKeyText);
}

export async function release(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      out: { type: 'string', default: 'release' },
      'no-build': { type: 'boolean', default: false },
      key: { type: 'string' },
      'key-id': { type: 'string' },
    },
    strict: true,
  });
  if ((values.key === undefined) !== (values['key-id'] === undefined)) {
    console.error('release: give --key and --key-id together (npm run xtask -- release-keygen makes both)');
    return 2;
  }
  const out = resolve(ROOT, values.out);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  if (values['no-build'] !== true) execFileSync('npm', ['run', 'build:types'], { cwd: ROOT, stdio: 'inherit' });
  const tarballs = packAll(out);
  const files = tarballs.map((name) => ({ name, data: readFileSync(join(out, name)) }));
  writeFileSync(join(out, 'SHA256SUMS'), checksumList(files));
  if (values.key !== undefined && values['key-id'] !== undefined) sign(out, values.key, values['key-id']);
  for (const name of readdirSync(out).sort()) console.log(join(out, name));
  return 0;
}

/** A new Ed25519 release key: DIR/crustcore.key (PKCS#8 PEM, mode 600), DIR/crustcore.key-id, DIR/crustcore.pub. */
export async function releaseKeygen(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { out: { type: 'string' } }, strict: true });
  if (values.out === undefined) {
    console.error('release-keygen: --out DIR is required');
    return 2;
  }
  const out = resolve(values.out);
  if (existsSync(join(out, 'crustcore.key'))) {
    console.error(`release-keygen: ${join(out, 'crustcore.key')} exists; refusing to overwrite a key`);
    return 2;
  }
  mkdirSync(out, { recursive: true });
  const { key, pem } = generateSigningKey();
  writeFileSync(join(out, 'crustcore.key'), pem, { mode: 0o600 });
  chmodSync(join(out, 'crustcore.key'), 0o600);
  writeFileSync(join(out, 'crustcore.key-id'), `${keyIdHex(key.keyId)}\n`);
  writeFileSync(join(out, 'crustcore.pub'), key.publicKeyText);
  console.log(`key ${keyIdHex(key.keyId)} in ${out}`);
  return 0;
}
