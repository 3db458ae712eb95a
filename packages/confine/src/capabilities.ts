/**
 * File-system authority as objects. A tool that reads takes an `FsReadCap`,
 * a tool that writes takes an `FsWriteCap`; both are bound to one worktree
 * root and a scope label (the task or job they were granted for). ES private
 * fields make them unforgeable at run time and nominal at compile time.
 */
import { err, ok, type Result } from '@crustcore/kernel';
import type { WorktreeRoot } from './worktree-root.js';

export interface CapabilityError {
  readonly _tag: 'InvalidCapability';
  readonly message: string;
}

const MAX_SCOPE_CHARS = 200;
const MAX_READ_ONLY_ROOTS = 16;

function checkScope(scope: string): CapabilityError | null {
  if (typeof scope !== 'string' || scope.length === 0 || scope.length > MAX_SCOPE_CHARS) {
    return { _tag: 'InvalidCapability', message: `scope must be 1..${MAX_SCOPE_CHARS} characters` };
  }
  if (/[\u0000-\u001f]/.test(scope)) return { _tag: 'InvalidCapability', message: 'scope contains control characters' };
  return null;
}

export interface FsReadCapOptions {
  /**
   * Extra roots that absolute read paths may name (e.g. a read-only SDK
   * directory). Relative paths always resolve against the worktree root.
   */
  readonly readOnlyRoots?: readonly WorktreeRoot[];
}

/** Authority to read inside one worktree root (plus optional read-only roots). */
export class FsReadCap {
  readonly #root: WorktreeRoot;
  readonly #scope: string;
  readonly #readOnlyRoots: readonly WorktreeRoot[];

  /** Run-time brand check: true only for granted capabilities. */
  static is(value: unknown): value is FsReadCap {
    return typeof value === 'object' && value !== null && #readOnlyRoots in value;
  }

  private constructor(root: WorktreeRoot, scope: string, readOnlyRoots: readonly WorktreeRoot[]) {
    this.#root = root;
    this.#scope = scope;
    this.#readOnlyRoots = readOnlyRoots;
  }

  static grant(root: WorktreeRoot, scope: string, options: FsReadCapOptions = {}): Result<CapabilityError, FsReadCap> {
    const scopeProblem = checkScope(scope);
    if (scopeProblem !== null) return err(scopeProblem);
    const extra = options.readOnlyRoots ?? [];
    if (extra.length > MAX_READ_ONLY_ROOTS) {
      return err({ _tag: 'InvalidCapability', message: `at most ${MAX_READ_ONLY_ROOTS} read-only roots` });
    }
    return ok(new FsReadCap(root, scope, Object.freeze([...extra])));
  }

  get root(): WorktreeRoot {
    return this.#root;
  }

  get scope(): string {
    return this.#scope;
  }

  get readOnlyRoots(): readonly WorktreeRoot[] {
    return this.#readOnlyRoots;
  }

  /** True when paths under `root` may be read with this capability. */
  covers(root: WorktreeRoot): boolean {
    return this.#root.equals(root) || this.#readOnlyRoots.some((extra) => extra.equals(root));
  }

  toString(): string {
    return `FsReadCap(${this.#root.path}, ${this.#scope})`;
  }
}

/** Authority to write inside one worktree root (never its `.git`). Implies reading it. */
export class FsWriteCap {
  readonly #root: WorktreeRoot;
  readonly #scope: string;
  readonly #readCap: FsReadCap;

  /** Run-time brand check: true only for granted capabilities. */
  static is(value: unknown): value is FsWriteCap {
    return typeof value === 'object' && value !== null && #readCap in value;
  }

  private constructor(root: WorktreeRoot, scope: string, readCap: FsReadCap) {
    this.#root = root;
    this.#scope = scope;
    this.#readCap = readCap;
  }

  static grant(root: WorktreeRoot, scope: string): Result<CapabilityError, FsWriteCap> {
    const readCap = FsReadCap.grant(root, scope);
    if (readCap._tag === 'Left') return readCap;
    return ok(new FsWriteCap(root, scope, readCap.right));
  }

  get root(): WorktreeRoot {
    return this.#root;
  }

  get scope(): string {
    return this.#scope;
  }

  /** Reading the same root (no extra read-only roots). */
  get readCap(): FsReadCap {
    return this.#readCap;
  }

  toString(): string {
    return `FsWriteCap(${this.#root.path}, ${this.#scope})`;
  }
}
