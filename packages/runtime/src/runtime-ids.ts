/**
 * Ids, nonces and timestamps come from the runtime, never from the kernel
 * (which has no clock and no randomness). Approval nonces are random so that
 * nothing a model writes can predict or replay them.
 */
import { randomBytes } from 'node:crypto';
import { type ApprovalId, type JobId, makeId, type TaskId, type ToolCallId } from '@crustcore/kernel';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** Crockford-style base32 of random bytes: compact, url- and log-safe. */
export function randomToken(bytes = 10): string {
  const raw = randomBytes(bytes);
  let out = '';
  let acc = 0;
  let bits = 0;
  for (const byte of raw) {
    acc = (acc << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(acc >>> bits) & 31];
    }
  }
  if (bits > 0) out += ALPHABET[(acc << (5 - bits)) & 31];
  return out;
}

export interface RuntimeIds {
  taskId(): TaskId;
  jobId(): JobId;
  toolCallId(): ToolCallId;
  approvalId(): ApprovalId;
  nonce(): string;
}

export const randomIds: RuntimeIds = {
  taskId: () => makeId('TaskId', randomToken(8)),
  jobId: () => makeId('JobId', randomToken(8)),
  toolCallId: () => makeId('ToolCallId', randomToken(8)),
  approvalId: () => makeId('ApprovalId', randomToken(8)),
  nonce: () => randomToken(16),
};
