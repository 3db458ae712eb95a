/**
 * The agent's worktree: the root, its file capabilities, the worktree gate
 * and the sandbox capabilities its commands run under. Opening one is the
 * only place the agent turns a worktree path into authority; every tool
 * takes the workspace, never a path string.
 */

import { posix } from 'node:path';
import {
  type FsReadCap,
  FsWriteCap,
  normalizeComponents,
  type PathError,
  WorktreeGate,
  WorktreeRoot,
} from '@crustcore/confine';
import { err, ok, type Result } from '@crustcore/kernel';
import { mintSandboxExecCap, type SandboxExecCap } from '@crustcore/sandbox';
import type { CommandRecord } from '@crustcore/verify';

/** Sandbox profiles the agent's commands use: recognized test runners, and everything else. */
export type CommandProfile = 'verify' | 'build';

export interface WorkspaceOptions {
  /** Label for the capabilities (the task id). */
  readonly scope: string;
  /** Mints the sandbox capability for a profile; default `mintSandboxExecCap(profile)`. */
  readonly sandboxCap?: (profile: CommandProfile) => Result<string, SandboxExecCap>;
  /** Removes secrets from text before a model can see it. */
  readonly scrub?: (text: string) => string;
  /** Told about every sandboxed command that ran (for the backend result). */
  readonly onCommand?: (record: CommandRecord) => void;
  /** PATH for commands in a worktree (the task environment's dependency bins and toolchain). */
  readonly pathFor?: ((worktreeRoot: string) => string) | null;
}

export interface WorkspaceError {
  readonly _tag: 'WorkspaceError';
  readonly message: string;
}

const defaultSandboxCap = (profile: CommandProfile): Result<string, SandboxExecCap> => {
  const minted = mintSandboxExecCap(profile);
  return minted._tag === 'Left' ? err(minted.left.message) : ok(minted.right);
};

export class AgentWorkspace {
  readonly #root: WorktreeRoot;
  readonly #write: FsWriteCap;
  readonly #gate: WorktreeGate;
  readonly #sandboxCap: (profile: CommandProfile) => Result<string, SandboxExecCap>;
  readonly #caps = new Map<CommandProfile, SandboxExecCap>();
  readonly scrub: (text: string) => string;
  readonly #onCommand: (record: CommandRecord) => void;
  readonly #pathFor: ((worktreeRoot: string) => string) | null;

  private constructor(root: WorktreeRoot, write: FsWriteCap, options: WorkspaceOptions) {
    this.#root = root;
    this.#write = write;
    this.#gate = WorktreeGate.for(root);
    this.#sandboxCap = options.sandboxCap ?? defaultSandboxCap;
    this.scrub = options.scrub ?? ((text) => text);
    this.#onCommand = options.onCommand ?? (() => undefined);
    this.#pathFor = options.pathFor ?? null;
  }

  /** PATH for the agent's commands here, or null for the sandbox's default. */
  commandPath(): string | null {
    return this.#pathFor === null ? null : this.#pathFor(this.path);
  }

  /** Notes a command that ran in the sandbox (argv and exit code, as CrustCore saw them). */
  recordCommand(argv: readonly string[], exitCode: number | null): void {
    this.#onCommand({ argv: [...argv], exitCode, source: 'host' });
  }

  static open(path: string, options: WorkspaceOptions): Result<WorkspaceError, AgentWorkspace> {
    const root = WorktreeRoot.open(path);
    if (root._tag === 'Left')
      return err({ _tag: 'WorkspaceError', message: `${root.left._tag}: ${root.left.message}` });
    const write = FsWriteCap.grant(root.right, options.scope.slice(0, 200) || 'agent');
    if (write._tag === 'Left') return err({ _tag: 'WorkspaceError', message: write.left.message });
    return ok(new AgentWorkspace(root.right, write.right, options));
  }

  get root(): WorktreeRoot {
    return this.#root;
  }
  get path(): string {
    return this.#root.path;
  }
  get writeCap(): FsWriteCap {
    return this.#write;
  }
  get readCap(): FsReadCap {
    return this.#write.readCap;
  }
  get gate(): WorktreeGate {
    return this.#gate;
  }

  /** The capability for a command profile, minted once. */
  sandbox(profile: CommandProfile): Result<string, SandboxExecCap> {
    const known = this.#caps.get(profile);
    if (known !== undefined) return ok(known);
    const minted = this.#sandboxCap(profile);
    if (minted._tag === 'Right') this.#caps.set(profile, minted.right);
    return minted;
  }

  /**
   * The path as the kernel's operation records it: normalized and relative
   * when it stays inside the root; otherwise lexically normalized so the
   * record shows where it leads (`/etc/passwd`, `../outside/x`) — the tool
   * then refuses it, and the ledger shows what was attempted.
   */
  operationPath(input: string): string {
    const normalized = normalizeComponents(input);
    if (normalized._tag === 'Right' && !input.startsWith('/'))
      return normalized.right.length === 0 ? '.' : normalized.right.join('/');
    return posix.normalize(input);
  }
}

/** A refusal of a path, in words for the model. */
export function describePathError(error: PathError | { readonly _tag: string; readonly message: string }): string {
  switch (error._tag) {
    case 'PathAbsolute':
    case 'PathEscape':
    case 'SymlinkEscape':
      return `DENIED: the path is outside the repository worktree (${error._tag}). Tools only reach files inside it; use a path relative to the repository root.`;
    case 'ProtectedPath':
      return 'DENIED: git metadata (.git) is read-only for tools.';
    case 'NotFound':
      return `not found: ${error.message}`;
    default:
      return `${error._tag}: ${error.message}`;
  }
}

/** Keeps the first and last parts of a long text, saying how much was dropped. */
export function clipMiddle(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const head = Math.ceil(maxChars * 0.6);
  const tail = maxChars - head;
  return `${text.slice(0, head)}\n…[${text.length - maxChars} characters omitted]…\n${text.slice(text.length - tail)}`;
}
