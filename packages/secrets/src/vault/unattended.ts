/**
 * The vault as commands that run without a person open it: `$CRUSTCORE_VAULT`
 * or `<home>/vault`, unlocked only by the key file `$CRUSTCORE_VAULT_KEYFILE`
 * (a passphrase would need a prompt in the middle of a run). One place, so
 * `crustcore secret`, the runtime's redactor, the native agent, workers and
 * `models --probe` all read the same vault.
 */
import { join, resolve } from 'node:path';
import { SecretHandle } from '../handle.js';
import type { SecretMaterial } from '../material.js';
import type { Redactor } from '../redact/redactor.js';
import { FileVault } from './file-vault.js';

type Env = Readonly<Record<string, string | undefined>>;

/** Where the vault lives: `$CRUSTCORE_VAULT`, else `<home>/vault`. */
export const defaultVaultPath = (home: string, env: Env): string =>
  env.CRUSTCORE_VAULT === undefined || env.CRUSTCORE_VAULT === '' ? join(home, 'vault') : resolve(env.CRUSTCORE_VAULT);

export type UnattendedVault =
  | { readonly vault: FileVault; readonly reason: null }
  | { readonly vault: null; readonly reason: string };

/** Opens the vault with the key file, or says why it stays closed. Never prompts. */
export async function openUnattendedVault(home: string, env: Env): Promise<UnattendedVault> {
  const keyFile = env.CRUSTCORE_VAULT_KEYFILE;
  if (keyFile === undefined || keyFile === '') return { vault: null, reason: 'no vault key (CRUSTCORE_VAULT_KEYFILE)' };
  const opened = await FileVault.open({
    path: defaultVaultPath(home, env),
    key: { kind: 'key-file', path: resolve(keyFile) },
  });
  return opened._tag === 'Right'
    ? { vault: opened.right, reason: null }
    : { vault: null, reason: `the vault did not open (${opened.left._tag})` };
}

/** Registers every stored secret with `redactor`; returns how many took. */
export async function registerVaultSecrets(vault: FileVault, redactor: Redactor): Promise<number> {
  const listed = await vault.list();
  let registered = 0;
  for (const stored of listed._tag === 'Right' ? listed.right : []) {
    const material = await vault.get(stored.handle);
    if (material._tag === 'Right' && redactor.register(stored.handle, material.right)._tag === 'Right') registered += 1;
  }
  return registered;
}

/** The secret stored under `name`, or null (no such name, or not a valid one). */
export async function vaultSecret(vault: FileVault, name: string): Promise<SecretMaterial | null> {
  const handle = SecretHandle.create(name);
  if (handle._tag === 'Left') return null;
  const got = await vault.get(handle.right);
  return got._tag === 'Right' ? got.right : null;
}
