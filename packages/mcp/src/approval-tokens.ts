/**
 * Human-issued approval tokens: a person's credential for answering the
 * kernel's `RequestApproval`. The MCP caller (a model) may create, stage and
 * verify, but approval comes from a person: `crustcore mcp-token TASK`
 * reaches this server through its local admin socket (never through an MCP
 * tool) and gets a one-time token bound to the kernel's pending approval (its
 * id, nonce and operation hash), the staged content hash, the passing
 * verification run and the verified patch hash. The person hands it to the
 * caller; `approve` redeems it and sends the kernel an `ApprovalResolved`
 * carrying the grant's nonce — the kernel decides, and mints `Approved`.
 *
 * - 160 random bits; only its SHA-256 is kept, so the book cannot leak a
 *   usable token.
 * - Single use: a redeemed token is gone, whether or not it fitted; its
 *   digest is remembered (bounded) so a reuse is told apart from a guess.
 * - Bound: presented for another task, or after the staged content changed,
 *   it is refused.
 * - Short-lived (10 minutes) and bounded in number.
 */
import { createHash, randomBytes } from 'node:crypto';
import { err, ok, type Result } from '@crustcore/kernel';
import { MCP_LIMITS } from './limits.js';

export interface ApprovalGrant {
  readonly taskId: string;
  /** The kernel's pending approval this token answers (from its RequestApproval action). */
  readonly approvalId: string;
  readonly nonce: string;
  readonly opHash: string;
  readonly stagedHash: string;
  readonly verificationRunId: bigint;
  readonly patchSha256: string;
  readonly issuedAtMs: number;
  readonly expiresAtMs: number;
}

export type TokenRefusal =
  | { readonly _tag: 'UnknownToken' }
  | { readonly _tag: 'TokenSpent' }
  | { readonly _tag: 'TokenExpired' }
  | { readonly _tag: 'TokenForAnotherTask'; readonly taskId: string; readonly grant: ApprovalGrant }
  | { readonly _tag: 'TooManyTokens' };

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const TOKEN_PREFIX = 'cct_';

function base32(bytes: Uint8Array): string {
  let out = '';
  let acc = 0;
  let bits = 0;
  for (const byte of bytes) {
    acc = ((acc << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(acc >>> bits) & 31];
    }
  }
  if (bits > 0) out += ALPHABET[(acc << (5 - bits)) & 31];
  return out;
}

const digest = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/** Spent token digests remembered, oldest dropped first. */
const MAX_SPENT = 10_000;

export class ApprovalTokenBook {
  readonly #grants = new Map<string, ApprovalGrant>();
  readonly #spent = new Set<string>();
  readonly #clockMs: () => number;
  readonly #ttlMs: number;

  constructor(options: { readonly clockMs?: () => number; readonly ttlMs?: number } = {}) {
    this.#clockMs = options.clockMs ?? Date.now;
    this.#ttlMs = options.ttlMs ?? MCP_LIMITS.tokenTtlMs;
  }

  #sweep(now: number): void {
    for (const [key, grant] of this.#grants) if (grant.expiresAtMs <= now) this.#grants.delete(key);
  }

  /** Mints a token for a person. Earlier tokens for the same task are revoked. */
  mint(
    binding: Omit<ApprovalGrant, 'issuedAtMs' | 'expiresAtMs'>,
  ): Result<TokenRefusal, { readonly token: string; readonly grant: ApprovalGrant }> {
    const now = this.#clockMs();
    this.#sweep(now);
    for (const [key, grant] of this.#grants) if (grant.taskId === binding.taskId) this.#grants.delete(key);
    if (this.#grants.size >= MCP_LIMITS.maxLiveTokens) return err({ _tag: 'TooManyTokens' });
    const token = `${TOKEN_PREFIX}${base32(randomBytes(20))}`;
    const grant: ApprovalGrant = { ...binding, issuedAtMs: now, expiresAtMs: now + this.#ttlMs };
    this.#grants.set(digest(token), grant);
    return ok({ token, grant });
  }

  /** Spends a token presented for `taskId`. A token that exists is spent even when refused. */
  redeem(token: string, taskId: string): Result<TokenRefusal, ApprovalGrant> {
    const now = this.#clockMs();
    const key = digest(token);
    const grant = this.#grants.get(key);
    if (grant === undefined) return err({ _tag: this.#spent.has(key) ? 'TokenSpent' : 'UnknownToken' });
    this.#grants.delete(key);
    this.#spent.add(key);
    if (this.#spent.size > MAX_SPENT) this.#spent.delete(this.#spent.values().next().value as string);
    if (grant.expiresAtMs <= now) return err({ _tag: 'TokenExpired' });
    if (grant.taskId !== taskId) return err({ _tag: 'TokenForAnotherTask', taskId, grant });
    return ok(grant);
  }

  /** Drops every token of a task (its content changed or it finished). */
  revokeTask(taskId: string): void {
    for (const [key, grant] of this.#grants) if (grant.taskId === taskId) this.#grants.delete(key);
  }

  get size(): number {
    return this.#grants.size;
  }
}
