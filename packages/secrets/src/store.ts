/**
 * What every secret store offers, and what the model is allowed to learn
 * from one: handles and whether each is available, never a value.
 */
import type { Result } from '@crustcore/kernel';
import type { SecretHandle, SecretUri } from './handle.js';
import type { SecretMaterial } from './material.js';
import type { StoreError } from './vault/errors.js';

// ─── model ────────────────────────────────────────────────────────────────

export interface StoredSecret {
  readonly handle: SecretHandle;
  /** When the value was last set, if the store records it. */
  readonly updatedAtMs: number | null;
}

export interface SecretStore {
  readonly kind: 'file-vault' | 'keychain';
  get(handle: SecretHandle): Promise<Result<StoreError, SecretMaterial>>;
  set(handle: SecretHandle, material: SecretMaterial): Promise<Result<StoreError, void>>;
  /** Resolves to whether something was removed. */
  remove(handle: SecretHandle): Promise<Result<StoreError, boolean>>;
  list(): Promise<Result<StoreError, readonly StoredSecret[]>>;
}

export type AvailabilityStatus = 'available' | 'missing' | 'store-unavailable';

/** The model-safe view of a secret. */
export interface SecretAvailability {
  readonly uri: SecretUri;
  readonly label: string;
  readonly status: AvailabilityStatus;
}

// ─── combinators ──────────────────────────────────────────────────────────

/** Availability of each wanted handle, from one listing of the store. */
export async function describeAvailability(
  store: SecretStore,
  wanted: readonly SecretHandle[],
): Promise<readonly SecretAvailability[]> {
  const listed = await store.list();
  const present = new Set(listed._tag === 'Right' ? listed.right.map((s) => s.handle.name as string) : []);
  return wanted.map((handle) => ({
    uri: handle.uri,
    label: handle.label,
    status: listed._tag === 'Left' ? 'store-unavailable' : present.has(handle.name) ? 'available' : 'missing',
  }));
}
