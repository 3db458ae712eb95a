/**
 * The redactor every recorded text passes through (event payloads, notes,
 * artifacts, receipts' model text). It always runs the token detectors; when
 * the vault can be opened without a prompt (a key file), every stored secret
 * is registered too, so its exact and encoded forms are caught, and so is
 * every credential-named variable of the process environment. The secrets
 * pack is loaded on demand, so `--version` never pays for it.
 */
import type { Redact } from './ledger-recorder.js';

/** Environment variable names that hold credentials by convention. */
const CREDENTIAL_VARIABLE = /(?:^|_)(?:API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$/i;

export async function loadRuntimeRedactor(
  home: string,
  env: NodeJS.ProcessEnv,
): Promise<{ readonly redact: Redact; readonly registered: number }> {
  const secrets = await import('@crustcore/secrets');
  const redactor = new secrets.Redactor({});
  let registered = 0;
  const { vault } = await secrets.openUnattendedVault(home, env);
  if (vault !== null) {
    registered += await secrets.registerVaultSecrets(vault, redactor);
    vault.close();
  }
  // Credentials this process holds in its environment (provider keys for workers and the native
  // agent, tokens) are matched exactly too, whatever their shape.
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value.length < 12 || !CREDENTIAL_VARIABLE.test(name)) continue;
    const handle = secrets.SecretHandle.create(`env.${name}`.slice(0, 64), name);
    const material = secrets.SecretMaterial.fromText(value);
    if (
      handle._tag === 'Right' &&
      material._tag === 'Right' &&
      redactor.register(handle.right, material.right)._tag === 'Right'
    )
      registered += 1;
  }
  return { redact: (text) => redactor.redactText(text), registered };
}
