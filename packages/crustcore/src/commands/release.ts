/**
 * `crustcore release verify FILE --sig FILE.minisig --pubkey KEY [--sums SHA256SUMS]`:
 * checks a release artifact before it is installed, with node:crypto only
 * (release/minisign.ts). Without --sums the signature is over FILE itself;
 * with --sums it is over the checksum list, and FILE must be listed there by
 * its own name with its own SHA-256. Exit 0 when every check passes, 6
 * (integrity) when one fails, 2 for a bad command line.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { type Command, UsageError } from '../cli/command.js';
import { ExitCode } from '../cli/exit-codes.js';
import { type Io, writeLine } from '../cli/output.js';
import { checkListed } from '../release/checksums.js';
import { verifyMinisign } from '../release/minisign.js';
import { releaseSpec } from './pack-specs.js';

function readInput(path: string, what: string): Buffer {
  if (!existsSync(path)) throw new UsageError(`${what} ${path} does not exist`);
  return readFileSync(path);
}

/** --pubkey is a key file, or the key's base64 line itself (as `minisign -P` takes it). */
const publicKeyText = (value: string): string =>
  existsSync(value)
    ? readFileSync(value, 'utf8')
    : /^[A-Za-z0-9+/=]+$/.test(value)
      ? value
      : readInput(value, 'public key').toString('utf8');

function refuse(io: Io, message: string): ExitCode {
  writeLine(io.stderr, `${io.err.red('refused:')} ${message}`);
  return ExitCode.integrity;
}

function verifyRelease(io: Io, file: string, sig: string, pubkey: string, sums: string | undefined): ExitCode {
  const data = readInput(file, 'file');
  const signed = sums === undefined ? data : readInput(sums, 'checksum list');
  const verified = verifyMinisign(signed, readInput(sig, 'signature').toString('utf8'), publicKeyText(pubkey));
  if (verified._tag === 'Left') return refuse(io, `${verified.left.reason}: ${verified.left.message}`);
  if (sums !== undefined) {
    const listed = checkListed(signed.toString('utf8'), basename(file), data);
    if (listed._tag === 'Left') return refuse(io, `not-listed: ${listed.left}`);
  }
  const what = sums === undefined ? basename(file) : `${basename(file)} (listed in the signed ${basename(sums)})`;
  writeLine(io.stdout, `${io.out.green('✓ verified')} ${what} — key ${verified.right.keyId}`);
  writeLine(io.stdout, `  trusted comment: ${verified.right.trustedComment}`);
  return ExitCode.ok;
}

export const releaseCommand: Command = {
  ...releaseSpec,
  run: async (args, io) => {
    const { values, positionals } = parseArgs({
      args: [...args],
      options: { sig: { type: 'string' }, pubkey: { type: 'string' }, sums: { type: 'string' } },
      strict: true,
      allowPositionals: true,
    });
    const [action, file, ...rest] = positionals;
    if (action !== 'verify') throw new UsageError('the only action is `release verify`');
    if (file === undefined || rest.length > 0) throw new UsageError('give exactly one FILE to verify');
    if (values.sig === undefined) throw new UsageError('--sig FILE.minisig is required');
    if (values.pubkey === undefined)
      throw new UsageError('--pubkey KEY (a minisign public key file or its base64 line) is required');
    return verifyRelease(io, file, values.sig, values.pubkey, values.sums);
  },
};
