/** How a gateway is set up for one task. */
import type { Redactor, SecretStore } from '@crustcore/secrets';
import type { RegistryFile } from '../registry/server-record.js';

export interface GatewayOptions {
  /** Read on every use, so a person's approval takes effect in a running task. */
  readonly registry: () => RegistryFile;
  /** The repository the task belongs to (records list the repositories allowed to use them). */
  readonly repository: string;
  /** The task worktree: bound read-write into stdio servers' sandboxes. */
  readonly worktree: string;
  readonly secrets: Pick<SecretStore, 'get'> | null;
  readonly redactor: Redactor;
  readonly wrap: (source: string, text: string) => string;
  readonly maxResultChars?: number;
  readonly maxArgumentBytes?: number;
  /** Told each time a server is started (diagnostics, tests, the benchmark). */
  readonly onStart?: (server: string) => void;
  /**
   * False: a server that stopped (a timeout, a crash) is not started again. For a worker's run: the
   * worktree a server would start from again is the worker's by then, and could hold its code.
   */
  readonly restart?: boolean;
}
