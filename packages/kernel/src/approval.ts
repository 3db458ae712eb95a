/**
 * Approvals. `Approved<T>` is the only proof that a human (or the user's
 * standing `--approve auto` instruction, where policy permits it) said yes to
 * exactly one operation. It is bound to the operation's hash and a nonce,
 * carries an expiry, and can be consumed once. Only the kernel mints it: the
 * constructor demands a module-private token, so neither a plain object nor
 * a cast `new` can produce one.
 */
import { canonicalJson, type Json } from './hash.js';
import type { ApprovalId, Hash32, TaskId } from './ids.js';
import type { Operation } from './operation.js';
import { err, ok, type Result } from './result.js';

const MINT: unique symbol = Symbol('crustcore.approved.mint');

import type { ApprovedBy } from './schema.js';

export type { ApprovedBy } from './schema.js';

export interface ApprovalRecordJson {
  readonly approvalId: ApprovalId;
  readonly taskId: TaskId;
  readonly opHash: Hash32;
  readonly nonce: string;
  readonly expiresAt: number;
  readonly approvedBy: ApprovedBy;
}

export type ConsumeError = { readonly _tag: 'AlreadyConsumed'; readonly approvalId: ApprovalId };

export class Approved<T extends Operation = Operation> {
  readonly #value: T;
  readonly #record: ApprovalRecordJson;
  #consumed = false;

  constructor(token: typeof MINT, value: T, record: ApprovalRecordJson) {
    if (token !== MINT) throw new TypeError('Approved can only be minted by the kernel');
    this.#value = value;
    this.#record = record;
  }

  get value(): T {
    return this.#value;
  }
  get approvalId(): ApprovalId {
    return this.#record.approvalId;
  }
  get opHash(): Hash32 {
    return this.#record.opHash;
  }
  get expiresAt(): number {
    return this.#record.expiresAt;
  }
  get approvedBy(): ApprovedBy {
    return this.#record.approvedBy;
  }
  get consumed(): boolean {
    return this.#consumed;
  }

  /**
   * Single use at run time too: the effect executor consumes the approval
   * right before it performs the operation; a second consume is refused.
   */
  consume(): Result<ConsumeError, T> {
    if (this.#consumed) return err({ _tag: 'AlreadyConsumed', approvalId: this.#record.approvalId });
    this.#consumed = true;
    return ok(this.#value);
  }

  toJSON(): Json {
    return { approved: this.#record as unknown as Json, operation: this.#value as unknown as Json };
  }

  toString(): string {
    return `Approved(${this.#record.approvalId}, ${canonicalJson(this.#value as unknown as Json)})`;
  }
}

/** Kernel-internal: not re-exported from the package index. */
export const mintApproved = <T extends Operation>(value: T, record: ApprovalRecordJson): Approved<T> =>
  new Approved(MINT, value, record);

export const isApproved = (value: unknown): value is Approved => value instanceof Approved;
