/**
 * `VerifiedPatch`: the only proof that a patch passed verification. Minted
 * by `verifyPatch` alone (the mint key never leaves this package), bound to
 * the patch bytes' hash, the base commit, the resulting tree, the verify
 * argv, sandbox profile, exit code and log hashes. ES private fields make a
 * look-alike object fail at run time; `stillMatches` re-checks the bytes.
 */
import { createHash } from 'node:crypto';
import type { ChangedFile } from './patch.js';
import type { Risk } from './risk.js';
import type { TestCounts } from './test-counts.js';

/** Plain-JSON evidence of a verification (for the ledger and `crustcore diff`). */
export interface VerifyEvidence {
  readonly taskId: string;
  readonly patchSha256: string;
  readonly patchBytes: number;
  readonly baseCommit: string;
  readonly treeId: string;
  readonly argv: readonly string[];
  readonly profile: string;
  readonly backend: string;
  readonly isolation: string;
  readonly exitCode: number;
  readonly stdoutSha256: string;
  readonly stderrSha256: string;
  readonly durationMs: number;
  readonly verifiedAtMs: number;
  readonly testCounts: TestCounts | null;
  readonly baselineCounts: TestCounts | null;
  readonly files: readonly ChangedFile[];
  readonly risks: readonly Risk[];
  /** Hash of the dependencies and toolchain the tests ran against (null: no environment was provided). */
  readonly environmentHash: string | null;
}

const MINT_KEY: unique symbol = Symbol('VerifiedPatch.mint');

/** Module-internal: only verify-patch.ts imports this. Not exported from the package index. */
export const verifiedPatchMintKey: typeof MINT_KEY = MINT_KEY;

const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

export class VerifiedPatch {
  readonly #evidence: VerifyEvidence;
  readonly #bytes: Uint8Array;

  constructor(key: typeof MINT_KEY, bytes: Uint8Array, evidence: VerifyEvidence) {
    if (key !== MINT_KEY) throw new TypeError('VerifiedPatch is minted only by verifyPatch');
    if (sha256Hex(bytes) !== evidence.patchSha256) throw new TypeError('VerifiedPatch bytes do not match their hash');
    if (evidence.exitCode !== 0) throw new TypeError('VerifiedPatch requires exit code 0');
    this.#bytes = new Uint8Array(bytes);
    this.#evidence = Object.freeze({
      ...evidence,
      argv: Object.freeze([...evidence.argv]),
      files: Object.freeze([...evidence.files]),
      risks: Object.freeze([...evidence.risks]),
    });
    Object.freeze(this);
  }

  /** True for instances minted by this module (a brand check, not duck typing). */
  static is(value: unknown): value is VerifiedPatch {
    return typeof value === 'object' && value !== null && #evidence in value;
  }

  get taskId(): string {
    return this.#evidence.taskId;
  }
  get patchSha256(): string {
    return this.#evidence.patchSha256;
  }
  get baseCommit(): string {
    return this.#evidence.baseCommit;
  }
  get treeId(): string {
    return this.#evidence.treeId;
  }
  get argv(): readonly string[] {
    return this.#evidence.argv;
  }
  get profile(): string {
    return this.#evidence.profile;
  }
  get exitCode(): number {
    return this.#evidence.exitCode;
  }
  get files(): readonly ChangedFile[] {
    return this.#evidence.files;
  }
  get risks(): readonly Risk[] {
    return this.#evidence.risks;
  }
  get environmentHash(): string | null {
    return this.#evidence.environmentHash;
  }
  get verifiedAtMs(): number {
    return this.#evidence.verifiedAtMs;
  }

  /** A copy of the verified patch bytes. */
  patchBytes(): Uint8Array {
    return new Uint8Array(this.#bytes);
  }

  /** True when `bytes` are exactly the verified patch (one changed byte → false). */
  stillMatches(bytes: Uint8Array): boolean {
    return bytes.length === this.#bytes.length && sha256Hex(bytes) === this.#evidence.patchSha256;
  }

  /** Plain JSON evidence; carries no authority (a copy cannot be turned back into a VerifiedPatch). */
  evidence(): VerifyEvidence {
    return this.#evidence;
  }

  toJSON(): VerifyEvidence {
    return this.#evidence;
  }
}
