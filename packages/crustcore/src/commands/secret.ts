/**
 * `crustcore secret set NAME | list | rm NAME`: the encrypted vault from the
 * command line. A value is read from a no-echo prompt on a terminal, or from
 * stdin when it is a pipe — never from argv, which every process on the
 * machine can read in /proc. `list` shows handles and availability, never
 * values.
 *
 * Vault: `--vault PATH`, default `$CRUSTCORE_VAULT` or `$CRUSTCORE_HOME/vault`
 * (~/.crustcore/vault) — the vault the runtime, agent and workers read.
 * Key: the key file named by CRUSTCORE_VAULT_KEYFILE (0600, created on first
 * use), else a passphrase typed at a terminal prompt.
 *
 * The secrets pack is imported only when this command runs.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { FileVault, SecretHandle, StoreError, VaultKeySource } from '@crustcore/secrets';
import { type Command, UsageError } from '../cli/command.js';
import { ExitCode } from '../cli/exit-codes.js';
import { type Io, writeLine } from '../cli/output.js';
import { crustcoreHome } from '../cli/paths.js';
import { secretSpec } from './pack-specs.js';

type SecretsPack = typeof import('@crustcore/secrets');

const OPTIONS = {
  vault: { type: 'string' },
  label: { type: 'string' },
  json: { type: 'boolean', default: false },
} as const;

const parseOptions = (args: readonly string[]) =>
  parseArgs({ args: [...args], options: OPTIONS, allowPositionals: true, strict: true });

interface Parsed {
  readonly action: 'set' | 'list' | 'rm';
  readonly name: string | null;
  /** `--vault PATH`; null: the vault every other command reads (`defaultVaultPath`). */
  readonly vaultPath: string | null;
  readonly label: string | undefined;
  readonly json: boolean;
}

/**
 * Parses without ever echoing an argument: a stray positional or unknown
 * option may be the secret typed where it does not belong.
 */
function parse(args: readonly string[], io: Io): Parsed {
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions(args);
  } catch {
    throw new UsageError('unknown option (values are never taken from the command line)');
  }
  const [action, ...rest] = parsed.positionals;
  if (action !== 'set' && action !== 'list' && action !== 'rm') throw new UsageError('expected set, list or rm');
  const wantsName = action !== 'list';
  if (rest.length !== (wantsName ? 1 : 0)) {
    throw new UsageError(
      action === 'set'
        ? 'give only the NAME; the value is read from a hidden prompt or from stdin, never from the command line'
        : wantsName
          ? 'give exactly one NAME'
          : 'list takes no arguments',
    );
  }
  return {
    action,
    name: wantsName ? (rest[0] ?? null) : null,
    vaultPath: parsed.values.vault === undefined ? null : resolve(io.cwd, parsed.values.vault),
    label: parsed.values.label,
    json: parsed.values.json === true,
  };
}

function fail(io: Io, message: string, code: ExitCode): ExitCode {
  writeLine(io.stderr, `${io.err.red('error:')} ${message}`);
  return code;
}

function storeExitCode(error: StoreError): ExitCode {
  switch (error._tag) {
    case 'VaultCorrupt':
    case 'VaultUnsupportedVersion':
    case 'VaultTooLarge':
      return ExitCode.integrity;
    case 'VaultIoError':
    case 'StoreUnavailable':
    case 'StoreCommandFailed':
      return ExitCode.internal;
    default:
      return ExitCode.usage;
  }
}

/** The key source: the key file when configured, else a passphrase typed at the terminal. */
async function keySource(
  pack: SecretsPack,
  io: Io,
  vaultExists: boolean,
): Promise<{ readonly key: VaultKeySource } | { readonly error: string }> {
  const keyFile = io.env.CRUSTCORE_VAULT_KEYFILE;
  if (keyFile !== undefined && keyFile !== '') {
    return { key: { kind: 'key-file', path: resolve(io.cwd, keyFile), createIfMissing: true } };
  }
  if (io.stdin.isTTY !== true) {
    return {
      error:
        'no vault key: set CRUSTCORE_VAULT_KEYFILE to a key file (created on first use), or run in a terminal to type the passphrase',
    };
  }
  const first = await pack.promptSecret(io.stdin, io.stderr, 'Vault passphrase (input hidden): ');
  if (first._tag === 'Left') return { error: `no passphrase (${first.left._tag})` };
  if (!vaultExists) {
    const again = await pack.promptSecret(io.stdin, io.stderr, 'Repeat the passphrase for the new vault: ');
    const same = again._tag === 'Right' && again.right.expose() === first.right.expose();
    if (again._tag === 'Right') again.right.dispose();
    if (!same) {
      first.right.dispose();
      return { error: 'the passphrases differ; nothing was stored' };
    }
  }
  return { key: { kind: 'passphrase', passphrase: first.right } };
}

async function vaultExists(path: string): Promise<boolean> {
  const { stat } = await import('node:fs/promises');
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function setSecret(pack: SecretsPack, io: Io, vault: FileVault, handle: SecretHandle): Promise<ExitCode> {
  const value =
    io.stdin.isTTY === true
      ? await pack.promptSecret(io.stdin, io.stderr, `Value for ${handle.uri} (input hidden): `)
      : await pack.readSecretFromPipe(io.stdin);
  if (value._tag === 'Left') {
    const reasons: Record<typeof value.left._tag, string> = {
      SecretInputCancelled: 'cancelled; nothing was stored',
      SecretInputEmpty: 'the value is empty; nothing was stored',
      SecretInputTooLong: `the value is longer than ${pack.MAX_SECRET_BYTES} bytes`,
      SecretInputNotText: 'the value is not UTF-8 text',
    };
    return fail(io, reasons[value.left._tag], ExitCode.usage);
  }
  const material = value.right;
  try {
    const stored = await vault.set(handle, material);
    if (stored._tag === 'Left') return fail(io, pack.describeStoreError(stored.left), storeExitCode(stored.left));
    writeLine(io.stdout, `stored ${io.out.cyan(handle.uri)} (${handle.label}) in ${vault.path}`);
    if (material.byteLength < pack.MIN_REDACTABLE_SECRET_LENGTH) {
      writeLine(
        io.stderr,
        `${io.err.yellow('warning:')} values shorter than ${pack.MIN_REDACTABLE_SECRET_LENGTH} characters cannot be redacted from tool output`,
      );
    }
    return ExitCode.ok;
  } finally {
    material.dispose();
  }
}

async function listSecrets(pack: SecretsPack, io: Io, vault: FileVault, json: boolean): Promise<ExitCode> {
  const listed = await vault.list();
  if (listed._tag === 'Left') return fail(io, pack.describeStoreError(listed.left), storeExitCode(listed.left));
  const rows = listed.right.map((secret) => ({
    uri: secret.handle.uri,
    label: secret.handle.label,
    status: 'available' as const,
    updatedAt: secret.updatedAtMs === null ? null : new Date(secret.updatedAtMs).toISOString(),
  }));
  if (json) {
    writeLine(io.stdout, JSON.stringify({ vault: vault.path, secrets: rows }));
    return ExitCode.ok;
  }
  if (rows.length === 0) {
    writeLine(io.stdout, `no secrets in ${vault.path}`);
    return ExitCode.ok;
  }
  const width = Math.max(...rows.map((row) => row.uri.length));
  for (const row of rows) {
    writeLine(
      io.stdout,
      `${io.out.cyan(row.uri.padEnd(width))}  ${io.out.green(row.status)}  ${row.label}${row.updatedAt === null ? '' : io.out.dim(`  (set ${row.updatedAt})`)}`,
    );
  }
  return ExitCode.ok;
}

export const secretCommand: Command = {
  ...secretSpec,
  async run(args, io) {
    const parsed = parse(args, io);
    const pack: SecretsPack = await import('@crustcore/secrets');
    const vaultPath = parsed.vaultPath ?? pack.defaultVaultPath(crustcoreHome(io.env), io.env);
    let handle: SecretHandle | null = null;
    if (parsed.name !== null) {
      const made = pack.SecretHandle.create(parsed.name, parsed.label);
      if (made._tag === 'Left') throw new UsageError(made.left.reason);
      handle = made.right;
    }
    const exists = await vaultExists(vaultPath);
    if (parsed.action !== 'set' && !exists) {
      if (parsed.action === 'list') {
        if (parsed.json) writeLine(io.stdout, JSON.stringify({ vault: vaultPath, secrets: [] }));
        else writeLine(io.stdout, `no vault at ${vaultPath}`);
        return ExitCode.ok;
      }
      return fail(io, `no vault at ${vaultPath}`, ExitCode.usage);
    }
    const source = await keySource(pack, io, exists);
    if ('error' in source) return fail(io, source.error, ExitCode.usage);
    const opened = await pack.FileVault.open({ path: vaultPath, key: source.key });
    if (source.key.kind === 'passphrase') source.key.passphrase.dispose();
    if (opened._tag === 'Left') return fail(io, pack.describeStoreError(opened.left), storeExitCode(opened.left));
    const vault = opened.right;
    try {
      if (parsed.action === 'list') return await listSecrets(pack, io, vault, parsed.json);
      if (handle === null) throw new UsageError('give exactly one NAME');
      if (parsed.action === 'set') return await setSecret(pack, io, vault, handle);
      const removed = await vault.remove(handle);
      if (removed._tag === 'Left') return fail(io, pack.describeStoreError(removed.left), storeExitCode(removed.left));
      if (!removed.right) return fail(io, `${handle.uri} is not stored`, ExitCode.usage);
      writeLine(io.stdout, `removed ${io.out.cyan(handle.uri)}`);
      return ExitCode.ok;
    } finally {
      vault.close();
    }
  },
};
