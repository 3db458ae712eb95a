/**
 * MCP tasks live in the repository's one ledger, the same
 * `$CRUSTCORE_HOME/projects/<repo-id>/events.log` that `crustcore run`,
 * `chat` and the daemon write (projectDirOf). Each tool call that moves a
 * task opens the ledger's spine (lock, rebuild the one kernel by replay),
 * submits its events, and closes it again — so between calls a `crustcore
 * run` on the same repository can take the ledger, and every task of the
 * repository, whichever surface made it, steps one kernel.
 *
 * Calls of this server on one ledger are serialized here (the ledger lock
 * would refuse a second open by the same process); another process holding
 * the ledger is a `busy` tool error.
 */
import { join } from 'node:path';
import type { Action, Json, TaskId } from '@crustcore/kernel';
import { ArtifactStore, describeReceiptKeyError, openReceiptKey } from '@crustcore/ledger';
import {
  LedgerBusyError,
  LedgerOpenFailed,
  LedgerSpine,
  type PendingEvent,
  projectDirOf,
  type Recorder,
  type Redact,
} from '@crustcore/runtime';
import type { Repository } from '@crustcore/verify';

export interface McpLedgerOptions {
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;
  readonly clockMs: () => number;
  readonly redact: Redact;
}

/** Why a ledger could not be used for this call; the service turns it into a tool error. */
export class LedgerUnavailable extends Error {
  override readonly name = 'LedgerUnavailable';
  readonly busy: boolean;
  constructor(message: string, busy: boolean) {
    super(message);
    this.busy = busy;
  }
}

/** One open spine for the length of a tool call. */
export interface LedgerCall {
  readonly spine: LedgerSpine;
  /** Records an event, steps the ledger's kernel, records its answer; returns the answer. */
  submit(pending: PendingEvent): Promise<readonly Action[]>;
}

export const logPathOf = (home: string, repo: Repository): string => join(projectDirOf(home, repo), 'events.log');

export class McpLedgers {
  readonly #o: McpLedgerOptions;
  readonly #queues = new Map<string, Promise<unknown>>();
  readonly #open = new Map<string, LedgerSpine>();

  constructor(options: McpLedgerOptions) {
    this.#o = options;
  }

  /** Runs `work` with the repository's spine open; serialized per ledger within this server. */
  with<T>(repo: Repository, work: (call: LedgerCall) => Promise<T>): Promise<T> {
    const logPath = logPathOf(this.#o.home, repo);
    const previous = this.#queues.get(logPath) ?? Promise.resolve();
    const next = previous.then(() => this.#withOpen(repo, logPath, work));
    const settled = next.catch(() => undefined);
    this.#queues.set(logPath, settled);
    void settled.then(() => {
      if (this.#queues.get(logPath) === settled) this.#queues.delete(logPath);
    });
    return next;
  }

  async #withOpen<T>(repo: Repository, logPath: string, work: (call: LedgerCall) => Promise<T>): Promise<T> {
    const spine = await this.#openSpine(repo, logPath);
    this.#open.set(logPath, spine);
    try {
      return await work({
        spine,
        submit: async (pending) => (await spine.submit(pending)).actions,
      });
    } finally {
      this.#open.delete(logPath);
      await spine.close();
    }
  }

  async #openSpine(repo: Repository, logPath: string): Promise<LedgerSpine> {
    const key = openReceiptKey({ ...this.#o.env, CRUSTCORE_HOME: this.#o.home });
    if (key._tag === 'Left') throw new LedgerUnavailable(describeReceiptKeyError(key.left), false);
    try {
      return await LedgerSpine.open({
        logPath,
        artifacts: new ArtifactStore(join(projectDirOf(this.#o.home, repo), 'artifacts')),
        key: key.right,
        clockMs: this.#o.clockMs,
        redact: this.#o.redact,
      });
    } catch (error) {
      if (error instanceof LedgerBusyError) throw new LedgerUnavailable(error.message, true);
      if (error instanceof LedgerOpenFailed) throw new LedgerUnavailable(error.message, false);
      throw error;
    }
  }

  /**
   * The Recorder a task's VerifySession writes through. Notes go to the spine
   * open for the current call; artifacts (the baseline run finishes between
   * calls) go straight to the content-addressed store, redacted like the
   * recorder does.
   */
  recorderFor(repo: Repository): Recorder {
    const logPath = logPathOf(this.#o.home, repo);
    const artifacts = new ArtifactStore(join(projectDirOf(this.#o.home, repo), 'artifacts'));
    const current = (): LedgerSpine => {
      const spine = this.#open.get(logPath);
      if (spine === undefined) throw new Error('no tool call holds the ledger open');
      return spine;
    };
    const redact = this.#o.redact;
    return {
      appendEvent: (event) => current().recorder.appendEvent(event),
      appendActions: (seq, actions, hash) => current().recorder.appendActions(seq, actions, hash),
      appendNote: (kind: string, taskId: TaskId, payload: Json) => current().recorder.appendNote(kind, taskId, payload),
      recordReceipt: (request) => current().recorder.recordReceipt(request),
      storeArtifact: async (bytes) => {
        const data = typeof bytes === 'string' ? new TextEncoder().encode(redact(bytes)) : bytes;
        const put = await artifacts.put(data);
        if (put._tag === 'Left') throw new Error(`artifact store failed: ${put.left._tag}`);
        return put.right.hash;
      },
    };
  }

  /** The path of a stored artifact, to read a verify run's output tail back. */
  artifactPath(repo: Repository, hash: string): string {
    return new ArtifactStore(join(projectDirOf(this.#o.home, repo), 'artifacts')).pathOf(hash as never);
  }
}
