/**
 * Which state directory an MCP server uses when none is given. Every IDE
 * window starts its own `crustcore mcp`, and the embedded database admits
 * one process: a second server on the same repository that took the same
 * directory found the database locked and answered every call with an
 * error. So each server claims a *slot* of the repository's state —
 * `<base>`, then `<base>~2`, `<base>~3`, … — and holds it (a lock file in
 * the slot, released at exit or taken over once its holder is dead). What
 * two servers on one repository really share is the repository's ledger,
 * which its own lock serializes (a call that finds it held is `busy`).
 */
import { DataDirLock } from '@crustcore/state';

export const MAX_STATE_SLOTS = 16;

export interface ClaimedSlot {
  readonly dir: string;
  /** Frees the slot for the next server (idempotent). */
  release(): void;
}

export const slotDir = (base: string, slot: number): string => (slot === 1 ? base : `${base}~${slot}`);

/** The first free slot of `base`, claimed; or why none could be had. */
export function claimStateSlot(
  base: string,
  maxSlots: number = MAX_STATE_SLOTS,
): { readonly _tag: 'Claimed'; readonly slot: ClaimedSlot } | { readonly _tag: 'Full'; readonly message: string } {
  for (let slot = 1; slot <= maxSlots; slot += 1) {
    const dir = slotDir(base, slot);
    const lock = DataDirLock.acquire(dir);
    if (lock._tag === 'Right') return { _tag: 'Claimed', slot: { dir, release: () => lock.right.release() } };
  }
  return {
    _tag: 'Full',
    message: `${maxSlots} MCP servers already serve this repository (state under ${base}); close one, or pass --state-dir DIR or --database-url URL`,
  };
}
