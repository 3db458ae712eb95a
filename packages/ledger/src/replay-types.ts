/**
 * The kernel surface replay (replay.ts) and snapshot checks (snapshot.ts) need, in one place both
 * import, so neither imports the other's module for its types.
 */
import type { Json } from '@crustcore/kernel';
import type { DecodedFrame } from './frame.js';

export interface ReplayableKernel<E> {
  readonly step: (event: E) => readonly unknown[];
  readonly stateHash: () => string;
  /** The state `stateHash` hashes; needed to write snapshots and to compare them with a replay. */
  readonly snapshot?: () => Json;
}

/** What replay reads of a frame (a decoded frame has it all; a buffered copy keeps only this). */
export type ReplayFrame = Pick<DecodedFrame, 'kind' | 'seq' | 'timestampMs' | 'taskId' | 'hash'>;

type Either<L, R> = { readonly _tag: 'Left'; readonly left: L } | { readonly _tag: 'Right'; readonly right: R };

/**
 * The kernel surface replay needs. `@crustcore/kernel` provides it all. `K` is
 * the instance type, so whoever rebuilds gets back the kernel it can step on.
 */
export interface ReplayKernel<E, K extends ReplayableKernel<E> = ReplayableKernel<E>> {
  readonly isKernelEventKind: (kind: string) => boolean;
  readonly decode: (
    value: unknown,
  ) => { readonly _tag: 'Left'; readonly left: unknown } | { readonly _tag: 'Right'; readonly right: E };
  readonly createKernel: () => K;
  readonly encodeActions: (actions: readonly unknown[]) => string;
  /**
   * Builds the kernel a `kernel.open` frame describes (its config and behaviour
   * flags), or says why it cannot (an unknown flag: a newer CrustCore wrote it).
   */
  readonly open?: (payload: Json) => Either<string, K>;
  /**
   * A kernel with the config of the `kernel.open` payload `opening`, resumed from a snapshot's
   * `state` (decoded; it may still be a lie: the caller checks the restored state hash).
   */
  readonly restore?: (opening: Json, state: Json) => Either<string, K>;
  /**
   * Logs written before `kernel.open` existed made a fresh kernel per task:
   * before the first open frame, an event of this kind starts a fresh kernel.
   */
  readonly legacyFreshKernelOn?: string;
}
