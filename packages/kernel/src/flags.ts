/**
 * Numbered kernel behaviour flags. A change that would make an old log replay
 * differently (other actions, another state hash) ships behind a flag: the
 * kernel config lists the flags a run used, and a config without `flags`
 * means the behaviour that wrote golden/ledger/v1. Flags are only ever added;
 * a number is never reused.
 */
export const KERNEL_FLAGS = {
  /** 1: a task paused by its budget reports the phase it was in (was `INIT`). */
  pausedPhase: 1,
  /** 2: `TaskFinished` carries a typed `cause`. */
  finishCause: 2,
  /** 3: settled approvals are evicted and pending ones capped (`maxPendingApprovals`). */
  boundedApprovals: 3,
} as const;

export type KernelFlag = (typeof KERNEL_FLAGS)[keyof typeof KERNEL_FLAGS];

/** What a new run should use; a log must record the flags it was written with. */
export const LATEST_KERNEL_FLAGS: readonly KernelFlag[] = [1, 2, 3];

const KNOWN: ReadonlySet<number> = new Set(Object.values(KERNEL_FLAGS));

/** True for a flag this kernel knows. A log written with a later flag must not replay here as if it were off. */
export const isKernelFlag = (value: unknown): value is KernelFlag => typeof value === 'number' && KNOWN.has(value);
