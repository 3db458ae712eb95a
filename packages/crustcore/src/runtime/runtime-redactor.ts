/**
 * The redactor every recorded text passes through (event payloads, notes,
 * artifacts, receipts' model text). It always runs the token detectors; when
 * the vault can be opened without a prompt (a key file), every stored secret
 * is registered too, so its exact and encoded forms are caught. The secrets
 * pack is loaded on demand, so `--version` never pays for it.
 */
import { join } from 'node:path';
import type { Redact } from './ledger-recorder.js';

export async function loadRuntimeRedactor(
  home: string,
  env: NodeJS.ProcessEnv,
): Promise<{ readonly redact: Redact; readonly registered: number }> {
  const secrets = await import('@crustcore/secrets');
  const redactor = new secrets.Redactor({});
  let registered = 0;
  const keyFile = env.CRUSTCORE_VAULT_KEYFILE;
  if (keyFile !== undefined && keyFile !== '') {
    const vault = await secrets.FileVault.open({
      path: env.CRUSTCORE_VAULT ?? join(home, 'vault'),
      key: { kind: 'key-file', path: keyFile },
    });
    if (vault._tag === 'Right') {
      const listed = await vault.right.list();
      if (listed._tag === 'Right') {
        for (const stored of listed.right) {
          const material = await vault.right.get(stored.handle);
          if (material._tag === 'Right' && redactor.register(stored.handle, material.right)._tag === 'Right')
            registered += 1;
        }
      }
      await vault.right.close();
    }
  }
  return { redact: (text) => redactor.redactText(text), registered };
}
