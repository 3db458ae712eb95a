/**
 * The messages the model sees, and the bookkeeping that keeps them small and
 * true:
 *
 *  - stale-read tombstones: once a file is written, every earlier read of it
 *    is replaced by a one-line tombstone (the old text would mislead);
 *  - micro-compaction: an earlier read-only result that a later identical
 *    call (same tool and arguments, nothing changed in between) repeats is
 *    replaced by a pointer to the later one;
 *  - summarization compaction (compaction.ts) replaces a prefix of the
 *    history with a summary, cutting only where no tool call is separated
 *    from its result.
 *
 * Messages are provider-neutral (`@crustcore/net`'s `Message`).
 */
import type { Message, ToolDefinition } from '@crustcore/net';

/** What the loop knows about a message beyond its content. */
export interface MessageMeta {
  /** Session entry id, when the message is persisted. */
  readonly entryId?: string;
  /** For tool results: the tool's name and canonical `tool(args)` key. */
  readonly tool?: string;
  readonly callKey?: string;
  /** A path whose content this result shows (read_file). */
  readonly reads?: string;
  /** A path this call changed (successful writes and edits). */
  readonly writes?: string;
  /** The call may have changed the worktree (and succeeded). */
  readonly mutated?: boolean;
  /** Read-only results with the same key and world may be merged. */
  readonly readOnly?: boolean;
  /** True when the read had no line range (it shows the whole file). */
  readonly wholeFile?: boolean;
  /** The receipt that vouches for a tool result. */
  readonly receiptHash?: string;
}

interface Slot {
  message: Message;
  readonly meta: MessageMeta;
  /** World version when the message was added: bumped by every successful mutation. */
  readonly world: number;
  /** Characters this message costs (cached; recomputed when content is replaced). */
  chars: number;
  replaced: boolean;
}

/** About four characters per token for English and code (an estimate for thresholds, not billing). */
export const CHARS_PER_TOKEN = 4;

export const tombstoneText = (path: string): string =>
  `[stale read: ${path} was changed by a later write or edit in this session, so this earlier content was removed. Read the file again for its current content.]`;

export const duplicateText = (tool: string): string =>
  `[duplicate: a later ${tool} call with the same arguments returned the same result; see below.]`;

/** Characters a message costs in a request (an estimate shared with compaction). */
export function messageChars(message: Message): number {
  switch (message.role) {
    case 'user':
      return message.content.length + 16;
    case 'tool':
      return message.content.length + message.toolName.length + message.toolCallId.length + 32;
    case 'assistant': {
      let total = 16;
      for (const part of message.content) {
        if (part.type === 'tool_call') total += part.name.length + JSON.stringify(part.arguments).length + 32;
        else total += part.text.length;
      }
      return total;
    }
  }
}

function withContent(message: Message, content: string): Message {
  return message.role === 'tool' ? { ...message, content } : message;
}

export class ContextWindow {
  readonly #slots: Slot[] = [];
  #world = 0;

  get length(): number {
    return this.#slots.length;
  }

  /** The current world version (successful mutations so far). */
  get world(): number {
    return this.#world;
  }

  messages(): Message[] {
    return this.#slots.map((slot) => slot.message);
  }

  metaAt(index: number): MessageMeta | undefined {
    return this.#slots[index]?.meta;
  }

  /** Appends a message; a successful write tombstones earlier reads of its path. */
  append(message: Message, meta: MessageMeta = {}): void {
    if (meta.mutated === true) this.#world += 1;
    this.#slots.push({ message, meta, world: this.#world, chars: messageChars(message), replaced: false });
    if (meta.writes !== undefined) this.#tombstone(meta.writes);
  }

  #tombstone(path: string): void {
    // The newest slot is the write itself; everything before it that showed the old content goes.
    for (let index = 0; index < this.#slots.length - 1; index += 1) {
      const slot = this.#slots[index] as Slot;
      if (slot.replaced || slot.meta.reads !== path || slot.message.role !== 'tool') continue;
      this.#replace(slot, tombstoneText(path));
    }
  }

  #replace(slot: Slot, content: string): void {
    slot.message = withContent(slot.message, content);
    slot.chars = messageChars(slot.message);
    slot.replaced = true;
  }

  /**
   * Replaces earlier read-only results that a later identical call in the
   * same world (nothing mutated in between) repeated word for word, and earlier reads of a file
   * that a later whole-file read in the same world shows again. Returns how
   * many were replaced.
   */
  microcompact(): number {
    const latestByKey = new Map<string, string>();
    const latestWholeRead = new Set<string>();
    let replaced = 0;
    for (let index = this.#slots.length - 1; index >= 0; index -= 1) {
      const slot = this.#slots[index] as Slot;
      if (slot.message.role !== 'tool' || slot.meta.readOnly !== true || slot.replaced) continue;
      const content = slot.message.content;
      const key = slot.meta.callKey === undefined ? null : `${slot.world}\u0000${slot.meta.callKey}`;
      const readKey = slot.meta.reads === undefined ? null : `${slot.world}\u0000${slot.meta.reads}`;
      const laterSame = key !== null && latestByKey.get(key) === content;
      const laterWhole = readKey !== null && latestWholeRead.has(readKey);
      if (laterSame || laterWhole) {
        this.#replace(slot, duplicateText(slot.meta.tool ?? 'tool'));
        replaced += 1;
        continue;
      }
      if (key !== null && !latestByKey.has(key)) latestByKey.set(key, content);
      if (readKey !== null && slot.meta.wholeFile === true) latestWholeRead.add(readKey);
    }
    return replaced;
  }

  /** Estimated tokens of a request carrying this history. */
  estimateTokens(system: string, tools: readonly ToolDefinition[]): number {
    let chars = system.length + JSON.stringify(tools).length;
    for (const slot of this.#slots) chars += slot.chars;
    return Math.ceil(chars / CHARS_PER_TOKEN);
  }

  /**
   * Where a summary may end: the smallest index ≥ `from` whose message is
   * not a tool result (so no tool call is cut from its result), or null.
   */
  safeCut(from: number): number | null {
    for (let index = Math.max(1, from); index < this.#slots.length; index += 1) {
      const message = this.#slots[index]?.message;
      if (message !== undefined && message.role !== 'tool') return index;
    }
    return null;
  }

  /** Messages in [start, end). */
  slice(start: number, end: number): Message[] {
    return this.#slots.slice(start, end).map((slot) => slot.message);
  }

  /** Replaces messages [start, end) with one message (the summary). */
  replaceRange(start: number, end: number, message: Message, meta: MessageMeta = {}): void {
    this.#slots.splice(start, end - start, {
      message,
      meta,
      world: this.#world,
      chars: messageChars(message),
      replaced: false,
    });
  }

  /** Characters of messages [start, end), by the same estimate as `estimateTokens`. */
  charsInRange(start: number, end: number): number {
    let total = 0;
    for (let index = start; index < end && index < this.#slots.length; index += 1)
      total += (this.#slots[index] as Slot).chars;
    return total;
  }

  /** Entry id of the message at `index`, if it was persisted. */
  entryIdAt(index: number): string | undefined {
    return this.#slots[index]?.meta.entryId;
  }
}
