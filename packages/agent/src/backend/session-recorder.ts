/**
 * The loop's recorder over a session file: messages, compactions and the
 * todo list become entries; at the end of each turn the worktree is
 * snapshotted (the entry names the commit) and the file is fsynced. A
 * session that cannot be written is reported once and then ignored: the
 * ledger, not the session, is the record CrustCore relies on.
 */
import type { Message } from '@crustcore/net';
import type { MessageMeta } from '../context/context-window.js';
import type { TurnRecorder } from '../loop/agent-loop.js';
import {
  type MessageEntry,
  SNAPSHOT_CUSTOM_TYPE,
  type StoredMessageMeta,
  TODO_CUSTOM_TYPE,
} from '../session/entries.js';
import type { Session } from '../session/session.js';
import type { WorktreeSnapshots } from '../session/worktree-snapshot.js';
import type { TodoItem } from '../tools/tool-args.js';

function storedMeta(meta: MessageMeta): StoredMessageMeta | undefined {
  const { entryId: _entryId, ...rest } = meta as MessageMeta & { receiptHash?: string };
  return Object.keys(rest).length === 0 ? undefined : (rest as StoredMessageMeta);
}

export class SessionRecorder implements TurnRecorder {
  readonly #session: Session;
  readonly #snapshots: WorktreeSnapshots | null;
  readonly #onProblem: (message: string) => void;
  #broken = false;
  #snapshotted = false;

  constructor(session: Session, snapshots: WorktreeSnapshots | null, onProblem: (message: string) => void) {
    this.#session = session;
    this.#snapshots = snapshots;
    this.#onProblem = onProblem;
  }

  get session(): Session {
    return this.#session;
  }

  #guard<T>(action: () => T): T | undefined {
    if (this.#broken) return undefined;
    try {
      return action();
    } catch (error) {
      this.#broken = true;
      this.#onProblem(`session ${this.#session.id} is no longer written: ${(error as Error).message}`);
      return undefined;
    }
  }

  message(message: Message, meta: MessageMeta): string | undefined {
    return this.#guard(() => {
      const stored = storedMeta(meta);
      return this.#session.append({
        type: 'message',
        message: message as MessageEntry['message'],
        ...(stored === undefined ? {} : { meta: stored }),
      }).id;
    });
  }

  compaction(summary: string, firstKeptEntryId: string | null, tokensBefore: number, tokensAfter: number): void {
    this.#guard(() =>
      this.#session.append({ type: 'compaction', summary, firstKeptEntryId, tokensBefore, tokensAfter }),
    );
  }

  todo(items: readonly TodoItem[]): void {
    this.#guard(() =>
      this.#session.append({ type: 'custom', customType: TODO_CUSTOM_TYPE, data: items.map((i) => ({ ...i })) }),
    );
  }

  async turnEnd(signal: AbortSignal | undefined, mutated: boolean): Promise<void> {
    if (this.#broken) return;
    // A turn that only read leaves the worktree as the last snapshot recorded it.
    if (this.#snapshots !== null && (mutated || !this.#snapshotted)) {
      this.#snapshotted = true;
      const taken = await this.#snapshots.take(signal);
      if (taken._tag === 'Right') {
        this.#guard(() =>
          this.#session.append({
            type: 'custom',
            customType: SNAPSHOT_CUSTOM_TYPE,
            data: { commit: taken.right.commit, tree: taken.right.tree },
          }),
        );
      } else {
        this.#onProblem(`worktree snapshot failed: ${taken.left.message}`);
      }
    }
    const flushed = this.#session.flush({ sync: true });
    if (flushed._tag === 'Left') {
      this.#broken = true;
      this.#onProblem(flushed.left.message);
    }
  }
}
