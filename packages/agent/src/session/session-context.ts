/**
 * From a session path (root → leaf) back to what the model sees: messages
 * with their bookkeeping, the latest model and thinking level, the todo list
 * and the last worktree snapshot. A compaction entry on the path stands for
 * the messages before its `firstKeptEntryId` (the task prompt, the first
 * message, is always kept).
 */
import type { Message, ThinkingLevel } from '@crustcore/net';
import { summaryMessage } from '../context/compaction.js';
import type { MessageMeta } from '../context/context-window.js';
import type { TodoItem } from '../tools/tool-args.js';
import { type SessionEntry, SNAPSHOT_CUSTOM_TYPE, TODO_CUSTOM_TYPE } from './entries.js';

export interface RebuiltContext {
  readonly messages: readonly { readonly message: Message; readonly meta: MessageMeta }[];
  readonly model: { readonly provider: string; readonly model: string } | null;
  readonly thinkingLevel: ThinkingLevel | null;
  readonly todo: readonly TodoItem[];
  /** The newest snapshot commit on the path, with the entry it belongs to. */
  readonly snapshot: { readonly commit: string; readonly entryId: string } | null;
}

function isTodoList(value: unknown): value is TodoItem[] {
  return (
    Array.isArray(value) &&
    value.every(
      (item) =>
        typeof item === 'object' &&
        item !== null &&
        typeof (item as { text?: unknown }).text === 'string' &&
        ['pending', 'in_progress', 'done'].includes((item as { status?: unknown }).status as string),
    )
  );
}

export function rebuildContext(path: readonly SessionEntry[]): RebuiltContext {
  let lastCompaction = -1;
  path.forEach((entry, index) => {
    if (entry.type === 'compaction') lastCompaction = index;
  });
  const compaction = lastCompaction === -1 ? null : path[lastCompaction];
  const messages: { message: Message; meta: MessageMeta }[] = [];
  let model: RebuiltContext['model'] = null;
  let thinkingLevel: ThinkingLevel | null = null;
  let todo: TodoItem[] = [];
  let snapshot: RebuiltContext['snapshot'] = null;
  let keeping = compaction === null || compaction?.type !== 'compaction' || compaction.firstKeptEntryId === null;
  let firstMessageSeen = false;
  for (const entry of path) {
    switch (entry.type) {
      case 'message': {
        if (compaction?.type === 'compaction' && entry.id === compaction.firstKeptEntryId) keeping = true;
        const meta: MessageMeta = { ...(entry.meta ?? {}), entryId: entry.id };
        if (!firstMessageSeen) {
          firstMessageSeen = true;
          messages.push({ message: entry.message as Message, meta });
          if (compaction?.type === 'compaction') {
            messages.push({
              message: summaryMessage(compaction.summary),
              meta: { tool: 'compaction', entryId: compaction.id },
            });
          }
          break;
        }
        if (keeping) messages.push({ message: entry.message as Message, meta });
        break;
      }
      case 'model_change':
        model = { provider: entry.provider, model: entry.model };
        break;
      case 'thinking_level_change':
        thinkingLevel = entry.thinkingLevel;
        break;
      case 'custom':
        if (entry.customType === TODO_CUSTOM_TYPE && isTodoList(entry.data)) todo = entry.data;
        if (
          entry.customType === SNAPSHOT_CUSTOM_TYPE &&
          typeof entry.data === 'object' &&
          entry.data !== null &&
          typeof (entry.data as { commit?: unknown }).commit === 'string'
        ) {
          snapshot = { commit: (entry.data as { commit: string }).commit, entryId: entry.id };
        }
        break;
      default:
        break;
    }
  }
  return { messages, model, thinkingLevel, todo, snapshot };
}

/** The newest snapshot at or before `entryId` on its path (what rewinding to it restores). */
export function snapshotAt(
  path: readonly SessionEntry[],
): { readonly commit: string; readonly entryId: string } | null {
  return rebuildContext(path).snapshot;
}
