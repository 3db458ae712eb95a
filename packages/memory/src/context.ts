/**
 * Context selection: a bounded bundle of prior observations for a goal — the
 * repository capsule's summary, the symbols and files most related to the
 * goal, and the relevant failure memories and nuggets — under a byte budget.
 *
 * The bundle is plain data (`PriorObservation`: a source label and text).
 * The prompt builders (the native agent's first prompt, the worker prompt)
 * fence every observation as untrusted data: memory is never authority, and
 * nothing here can change a policy, an approval or a secret — the bundle is
 * only ever text in a prompt.
 *
 * `CapsuleInput` is the seam for the repository capsule (`@crustcore/index`):
 * whatever builds the capsule hands over its summary and the code it finds
 * related to the goal, as plain data, most related first.
 */
import type { PriorObservation } from '@crustcore/verify';
import { ageDays, type RankedMemory } from './ranking.js';

export interface RelatedCode {
  readonly path: string;
  /** 1-based line of the symbol, when there is one. */
  readonly line?: number | null;
  readonly symbol?: string | null;
  /** function, class, type, test, config … as the capsule names it. */
  readonly kind?: string | null;
}

export interface CapsuleInput {
  /** A few lines: stack, roles of files, test and build commands. */
  readonly summary: string;
  /** Most related to the goal first. */
  readonly related: readonly RelatedCode[];
}

export interface ContextBudget {
  /** Bound on the UTF-8 bytes of all observation texts together. */
  readonly maxBytes: number;
}

export const DEFAULT_CONTEXT_BUDGET: ContextBudget = { maxBytes: 6 * 1024 };

export interface ContextInput {
  readonly capsule?: CapsuleInput | null;
  /** Ranked memories for the goal (`MemoryStore.search`), best first. */
  readonly memories: readonly RankedMemory[];
  /** For the age shown beside each memory. */
  readonly nowMs: number;
  readonly budget?: ContextBudget;
}

export interface ContextBundle {
  readonly observations: readonly PriorObservation[];
  readonly bytes: number;
  /** Items left out for the budget. */
  readonly dropped: number;
}

const bytesOf = (text: string): number => Buffer.byteLength(text, 'utf8');
const ITEM_CHARS = 600;
const clip = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);
/** Share of the budget the capsule summary may take; the rest goes to memories, then related code. */
const SUMMARY_SHARE = 0.25;

function memoryLine(ranked: RankedMemory, nowMs: number): string {
  const m = ranked.memory;
  const days = Math.floor(ageDays(m.createdAtMs, nowMs));
  const head = `- [${m.kind} ${m.id}, ${days === 0 ? 'today' : `${days} day${days === 1 ? '' : 's'} old`}, from ${m.source === 'person' ? 'a person' : 'the verifier'}] ${clip(m.body, ITEM_CHARS)}`;
  return m.fix === null ? head : `${head}\n  verified fix: ${clip(m.fix, ITEM_CHARS)}`;
}

function codeLine(code: RelatedCode): string {
  const at = code.line === undefined || code.line === null ? code.path : `${code.path}:${code.line}`;
  const what = [code.kind, code.symbol].filter((part) => part !== undefined && part !== null && part !== '').join(' ');
  return clip(`- ${at}${what === '' ? '' : ` ${what}`}`, 300);
}

/** Takes whole lines while they fit; returns the lines taken and how many did not fit. */
function fill(lines: readonly string[], room: number): { taken: string[]; bytes: number; dropped: number } {
  const taken: string[] = [];
  let bytes = 0;
  for (const line of lines) {
    const cost = bytesOf(line) + 1;
    if (bytes + cost > room) continue;
    taken.push(line);
    bytes += cost;
  }
  return { taken, bytes, dropped: lines.length - taken.length };
}

export function selectContext(input: ContextInput): ContextBundle {
  const budget = Math.max(0, Math.floor((input.budget ?? DEFAULT_CONTEXT_BUDGET).maxBytes));
  const observations: PriorObservation[] = [];
  let used = 0;
  let dropped = 0;
  const summary = input.capsule?.summary.trim() ?? '';
  if (summary !== '') {
    const room = Math.floor(budget * SUMMARY_SHARE);
    const lines = fill(summary.split('\n'), room);
    if (lines.taken.length > 0) observations.push({ source: 'repository capsule', text: lines.taken.join('\n') });
    used += lines.bytes;
    dropped += lines.dropped;
  }
  const failures = input.memories.filter((r) => r.memory.kind === 'failure').map((r) => memoryLine(r, input.nowMs));
  const notes = input.memories.filter((r) => r.memory.kind !== 'failure').map((r) => memoryLine(r, input.nowMs));
  for (const [source, lines] of [
    ['repository memory: nuggets, conventions and decisions', notes],
    ['repository memory: past failures and their fixes', failures],
    ['repository capsule: code related to the goal', (input.capsule?.related ?? []).map(codeLine)],
  ] as const) {
    const section = fill(lines, budget - used);
    dropped += section.dropped;
    if (section.taken.length === 0) continue;
    observations.push({ source, text: section.taken.join('\n') });
    used += section.bytes;
  }
  return { observations, bytes: used, dropped };
}
