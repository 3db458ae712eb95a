/**
 * Frame kinds the ledger itself gives meaning to. Kernel events use their
 * PascalCase event kind; everything else is lowercase dotted.
 */

/**
 * Written by the writer after cutting the log back to its head (`reason` 'torn tail' or
 * 'unacknowledged commit': `{reason, truncatedBytes, droppedFrames, afterSeq, zeroFilled}`), and
 * by the runtime after a kernel event the log ends with unanswered (`{reason: 'unanswered event', eventSeq}`).
 */
export const RECOVERED_KIND = 'ledger.recovered';
/** Written by the runtime after each kernel step; payload `{for, actions, state}`. */
export const ACTIONS_KIND = 'kernel.actions';
/** A tool receipt; payload = the receipt (see receipt.ts). */
export const RECEIPT_KIND = 'tool.receipt';
/**
 * Opens a kernel: from this frame on, one kernel with the recorded config and
 * behaviour flags steps every kernel event of the log. Payload `{v, config, flags}`.
 */
export const OPEN_KIND = 'kernel.open';
/**
 * The kernel state after the `kernel.actions` frame it covers, so opening a long log can start
 * there instead of replaying from seq 1. Payload `{v, covers: {seq, hash}, stateHash, state, mac}`
 * (snapshot.ts). Not a kernel event: replay of any version skips it.
 */
export const SNAPSHOT_KIND = 'kernel.snapshot';
