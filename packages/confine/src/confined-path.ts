/**
 * Confined paths: the only path values structured tools accept. They are
 * minted by the path resolver alone (the mint key never leaves this package),
 * carry the root they were checked against, and hold the canonical
 * (symlink-free, normalized) relative path that the check approved.
 */
import type { WorktreeRoot } from './worktree-root.js';

/** Held only by the resolver; a constructor call without it throws (a programming error). */
const mintKey: unique symbol = Symbol('confine.mint');
export type MintKey = typeof mintKey;

/** For the resolver module only; not exported from the package index. */
export function resolverMintKey(): MintKey {
  return mintKey;
}

function checkKey(key: MintKey): void {
  // A wrong key means code outside the resolver tried to mint a path: a bug, not bad input.
  if (key !== mintKey) throw new TypeError('confined paths are minted by the path resolver only');
}

/** A path that may be read: inside `root`, no symlink escape, no NUL, normalized. */
export class ConfinedReadPath {
  readonly #root: WorktreeRoot;
  readonly #relative: string;

  /** Run-time brand check: true only for instances minted by the resolver. */
  static is(value: unknown): value is ConfinedReadPath {
    return typeof value === 'object' && value !== null && #relative in value;
  }

  constructor(key: MintKey, root: WorktreeRoot, relative: string) {
    checkKey(key);
    this.#root = root;
    this.#relative = relative;
  }

  get root(): WorktreeRoot {
    return this.#root;
  }

  /** Canonical path relative to the root, `/`-separated; `''` is the root itself. */
  get relative(): string {
    return this.#relative;
  }

  get absolute(): string {
    return this.#root.join(this.#relative);
  }

  toString(): string {
    return `ConfinedReadPath(${this.#relative === '' ? '.' : this.#relative})`;
  }

  toJSON(): { readonly root: string; readonly relative: string } {
    return { root: this.#root.path, relative: this.#relative };
  }
}

/**
 * A path that may be written: everything a read path guarantees, plus not
 * under `.git`, and (when it existed at resolve time) a regular file with a
 * single link. Writes re-check all of it against the live file system.
 */
export class ConfinedWritePath {
  readonly #root: WorktreeRoot;
  readonly #relative: string;

  /** Run-time brand check: true only for instances minted by the resolver. */
  static is(value: unknown): value is ConfinedWritePath {
    return typeof value === 'object' && value !== null && #relative in value;
  }

  constructor(key: MintKey, root: WorktreeRoot, relative: string) {
    checkKey(key);
    this.#root = root;
    this.#relative = relative;
  }

  get root(): WorktreeRoot {
    return this.#root;
  }

  /** Canonical path relative to the root, `/`-separated; never empty. */
  get relative(): string {
    return this.#relative;
  }

  get absolute(): string {
    return this.#root.join(this.#relative);
  }

  toString(): string {
    return `ConfinedWritePath(${this.#relative})`;
  }

  toJSON(): { readonly root: string; readonly relative: string } {
    return { root: this.#root.path, relative: this.#relative };
  }
}
