/**
 * ApprovedSecretView: a secret lent to exactly one approved tool call, once.
 * The broker grants it after the approval for that call; the tool's adapter
 * uses it; a second use, a use for another call, or a use after expiry is a
 * typed error. After its one use the view disposes the material it owns, so
 * grant it a material of its own (load a fresh one from the store).
 */
import { type ApprovalId, err, ok, type Result, type ToolCallId } from '@crustcore/kernel';
import type { SecretHandle } from './handle.js';
import type { SecretMaterial } from './material.js';

// ─── model ────────────────────────────────────────────────────────────────

export type SecretViewError =
  | { readonly _tag: 'SecretViewAlreadyUsed'; readonly toolCallId: ToolCallId }
  | { readonly _tag: 'SecretViewWrongToolCall'; readonly expected: ToolCallId; readonly actual: ToolCallId }
  | { readonly _tag: 'SecretViewExpired'; readonly expiresAtMs: number; readonly nowMs: number }
  | { readonly _tag: 'SecretViewDisposed' };

export interface SecretViewGrant {
  readonly handle: SecretHandle;
  /** Ownership passes to the view; it is disposed after the one use (or on revoke). */
  readonly material: SecretMaterial;
  readonly toolCallId: ToolCallId;
  readonly approvalId: ApprovalId;
  readonly expiresAtMs: number;
}

const inspectCustom = Symbol.for('nodejs.util.inspect.custom');

export class ApprovedSecretView {
  readonly #handle: SecretHandle;
  readonly #toolCallId: ToolCallId;
  readonly #approvalId: ApprovalId;
  readonly #expiresAtMs: number;
  #material: SecretMaterial | null;
  #used = false;

  private constructor(grant: SecretViewGrant) {
    this.#handle = grant.handle;
    this.#toolCallId = grant.toolCallId;
    this.#approvalId = grant.approvalId;
    this.#expiresAtMs = grant.expiresAtMs;
    this.#material = grant.material;
    Object.freeze(this);
  }

  static grant(grant: SecretViewGrant): ApprovedSecretView {
    return new ApprovedSecretView(grant);
  }

  get handle(): SecretHandle {
    return this.#handle;
  }
  get toolCallId(): ToolCallId {
    return this.#toolCallId;
  }
  get approvalId(): ApprovalId {
    return this.#approvalId;
  }
  get expiresAtMs(): number {
    return this.#expiresAtMs;
  }
  get used(): boolean {
    return this.#used;
  }

  /**
   * Lends the material to `consume` for the duration of its (possibly async)
   * run, then disposes it. The view is marked used before `consume` starts,
   * so a concurrent second use is refused too.
   */
  async use<T>(
    toolCallId: ToolCallId,
    nowMs: number,
    consume: (material: SecretMaterial) => T | Promise<T>,
  ): Promise<Result<SecretViewError, T>> {
    const material = this.#take(toolCallId, nowMs);
    if (material._tag === 'Left') return material;
    try {
      return ok(await consume(material.right));
    } finally {
      material.right.dispose();
    }
  }

  /** Disposes the material without using it (the call was cancelled). */
  revoke(): void {
    this.#used = true;
    this.#material?.dispose();
    this.#material = null;
  }

  #take(toolCallId: ToolCallId, nowMs: number): Result<SecretViewError, SecretMaterial> {
    if (this.#used) return err({ _tag: 'SecretViewAlreadyUsed', toolCallId: this.#toolCallId });
    if (toolCallId !== this.#toolCallId) {
      return err({ _tag: 'SecretViewWrongToolCall', expected: this.#toolCallId, actual: toolCallId });
    }
    if (nowMs >= this.#expiresAtMs) {
      this.revoke();
      return err({ _tag: 'SecretViewExpired', expiresAtMs: this.#expiresAtMs, nowMs });
    }
    const material = this.#material;
    this.#used = true;
    this.#material = null;
    if (material === null || material.disposed) return err({ _tag: 'SecretViewDisposed' });
    return ok(material);
  }

  toString(): string {
    return `ApprovedSecretView(${this.#handle.uri} for ${this.#toolCallId}${this.#used ? ', used' : ''})`;
  }

  [inspectCustom](): string {
    return this.toString();
  }

  toJSON(): never {
    throw new TypeError('ApprovedSecretView cannot be serialized');
  }
}
