/**
 * The capsule for one goal: a short summary of the repository (counts, the
 * detected stack's fixed tool names, the fixed command strings) and the code
 * most related to the goal — symbols whose names, and files whose paths,
 * share words with it. Plain data, shaped like `@crustcore/memory`'s
 * `CapsuleInput`, so context selection takes it as it is.
 *
 * Paths and symbol names are the repository's own text: whoever shows them
 * to a model fences them as untrusted data. Ranking is deterministic (score,
 * then path, then line): the same capsule and goal give the same list.
 */
import type { RepoCapsule } from './capsule.js';

export interface GoalCode {
  readonly path: string;
  readonly line: number | null;
  readonly symbol: string | null;
  readonly kind: string | null;
}

export interface GoalCapsule {
  readonly summary: string;
  /** Most related to the goal first. */
  readonly related: readonly GoalCode[];
}

/** Default bound on related entries (context selection clips further by bytes). */
export const GOAL_RELATED_LIMIT = 24;

/** Words too common in goals to point at code. */
const STOPWORDS = new Set(
  'the and for with from that this into when then than fix make use should does not are was its test tests file files code'.split(
    ' ',
  ),
);
/** A hostile goal or name is bounded: only so many words are compared. */
const MAX_WORDS = 64;

/** Lower-cased words of text or an identifier (camelCase, snake_case, kebab-case, paths split). */
export function goalWords(text: string): string[] {
  const words = text
    .slice(0, 4_000)
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z])([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .map((word) => (word.length > 4 && word.endsWith('s') ? word.slice(0, -1) : word))
    .filter((word) => word.length >= 3 && !STOPWORDS.has(word));
  return [...new Set(words)].slice(0, MAX_WORDS);
}

const overlap = (words: readonly string[], goal: ReadonlySet<string>): number =>
  words.reduce((n, word) => n + (goal.has(word) ? 1 : 0), 0);

function summaryOf(capsule: RepoCapsule): string {
  const roles = Object.entries(capsule.roles)
    .filter(([, count]) => count > 0)
    .map(([role, count]) => `${count} ${role}`);
  const symbols = capsule.files.reduce((sum, file) => sum + file.symbols.length, 0);
  const stack = capsule.stack
    .filter((entry) => !entry.manifest.includes('/'))
    .map((entry) => (entry.tools.length === 0 ? entry.ecosystem : `${entry.ecosystem} (${entry.tools.join(', ')})`));
  return [
    `files: ${capsule.files.length} (${roles.join(', ') || 'none'}), ${symbols} symbols`,
    `stack: ${stack.join(', ') || 'none detected'}`,
    `test: ${capsule.testCommands.join(' | ') || 'none found'} · build: ${capsule.buildCommands.join(' | ') || 'none found'}`,
  ].join('\n');
}

interface Scored extends GoalCode {
  readonly score: number;
}

function scoredCode(capsule: RepoCapsule, goal: ReadonlySet<string>): Scored[] {
  const scored: Scored[] = [];
  for (const file of capsule.files) {
    if (file.role === 'docs' || file.role === 'other') continue;
    const pathScore = overlap(goalWords(file.path), goal);
    let symbolHit = false;
    for (const symbol of file.symbols) {
      const nameScore = overlap(goalWords(symbol.name), goal);
      if (nameScore === 0) continue;
      symbolHit = true;
      // A name that says the goal's words counts most; the file's path and being exported break ties.
      const score = nameScore * 4 + pathScore + (symbol.exported ? 1 : 0) + (file.role === 'source' ? 1 : 0);
      scored.push({ path: file.path, line: symbol.line, symbol: symbol.name, kind: symbol.kind, score });
    }
    if (!symbolHit && pathScore > 0)
      scored.push({ path: file.path, line: null, symbol: null, kind: null, score: pathScore * 2 });
  }
  return scored;
}

export function capsuleForGoal(capsule: RepoCapsule, goal: string, limit = GOAL_RELATED_LIMIT): GoalCapsule {
  const words = new Set(goalWords(goal));
  const related = scoredCode(capsule, words)
    .sort(
      (a, b) => b.score - a.score || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0) || (a.line ?? 0) - (b.line ?? 0),
    )
    .slice(0, Math.max(0, limit))
    .map(({ path, line, symbol, kind }) => ({ path, line, symbol, kind }));
  return { summary: summaryOf(capsule), related };
}
