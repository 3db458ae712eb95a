/**
 * Expected failures of the secret stores. None carries a secret value, and
 * none carries vault contents: a wrong key and a corrupted file are told
 * apart, but neither ever yields a partial read.
 */

export type VaultError =
  /** The key does not open this vault (wrong passphrase or key file). */
  | { readonly _tag: 'VaultWrongKey' }
  /** The file is damaged or was tampered with; nothing in it is trusted. */
  | { readonly _tag: 'VaultCorrupt'; readonly reason: string }
  | { readonly _tag: 'VaultUnsupportedVersion'; readonly version: number }
  /** The vault was made with a passphrase and opened with a key file, or the other way round. */
  | { readonly _tag: 'VaultKeyKindMismatch'; readonly vaultKey: 'passphrase' | 'key-file' }
  | { readonly _tag: 'VaultTooLarge'; readonly bytes: number; readonly maxBytes: number }
  | { readonly _tag: 'VaultIoError'; readonly operation: string; readonly code: string | null }
  | { readonly _tag: 'KeyFileTooOpen'; readonly path: string; readonly mode: string }
  | { readonly _tag: 'KeyFileWrongOwner'; readonly path: string }
  | { readonly _tag: 'KeyFileMalformed'; readonly path: string }
  | { readonly _tag: 'KeyFileMissing'; readonly path: string };

export type StoreError =
  | VaultError
  | { readonly _tag: 'SecretNotFound'; readonly uri: string }
  /** The stored bytes are not a usable secret (empty, not text, too long). */
  | { readonly _tag: 'SecretUnusable'; readonly uri: string; readonly reason: string }
  | { readonly _tag: 'StoreUnavailable'; readonly reason: string }
  | { readonly _tag: 'StoreCommandFailed'; readonly operation: string; readonly reason: string };

export const ioError = (operation: string, error: unknown): VaultError => ({
  _tag: 'VaultIoError',
  operation,
  code: typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : null,
});

/** One line for people. Never includes a secret: errors carry none. */
export function describeStoreError(error: StoreError): string {
  switch (error._tag) {
    case 'VaultWrongKey':
      return 'the key does not open this vault (wrong passphrase or key file)';
    case 'VaultCorrupt':
      return `the vault file is damaged or was modified: ${error.reason}`;
    case 'VaultUnsupportedVersion':
      return `the vault file has format version ${error.version}, which this crustcore cannot read`;
    case 'VaultKeyKindMismatch':
      return `this vault is opened with a ${error.vaultKey === 'passphrase' ? 'passphrase' : 'key file'}`;
    case 'VaultTooLarge':
      return `the vault file is ${error.bytes} bytes; at most ${error.maxBytes} are read`;
    case 'VaultIoError':
      return `could not ${error.operation}${error.code === null ? '' : ` (${error.code})`}`;
    case 'KeyFileTooOpen':
      return `key file ${error.path} has mode ${error.mode}; run chmod 600 on it`;
    case 'KeyFileWrongOwner':
      return `key file ${error.path} belongs to another user`;
    case 'KeyFileMalformed':
      return `key file ${error.path} does not hold 64 hex characters`;
    case 'KeyFileMissing':
      return `key file ${error.path} does not exist`;
    case 'SecretNotFound':
      return `${error.uri} is not stored`;
    case 'SecretUnusable':
      return `${error.uri} is stored but unusable: ${error.reason}`;
    case 'StoreUnavailable':
      return `the secret store is unavailable: ${error.reason}`;
    case 'StoreCommandFailed':
      return `the secret store failed to ${error.operation}: ${error.reason}`;
  }
}
