/**
 * What shell completion offers, derived from the command specs' usage strings
 * (the one source `--help` also prints), so a new command or flag completes
 * without anyone editing a completion script: the command names, each
 * command's actions (the bare words right after its name: `secret set|list|rm`),
 * its flags, and the values of flags whose usage lists them (`--approve auto|ask|deny`).
 */
import type { CommandSpec } from '../cli/command.js';

export interface CommandCompletion {
  readonly name: string;
  readonly summary: string;
  readonly actions: readonly string[];
  readonly flags: readonly string[];
  /** Flags whose value is one of a fixed set, with that set. */
  readonly flagValues: ReadonlyMap<string, readonly string[]>;
}

const WORD = /^[a-z][a-z0-9-]*$/;
const FLAG = /--[a-z][a-z0-9-]*/g;
const FLAG_WITH_CHOICES = /(--[a-z][a-z0-9-]*)[ =]\[?([a-z0-9-]+(?:\|[a-z0-9-]+)+)\]?/g;

/** Splits on ` | ` outside brackets and parentheses: the alternatives of a usage line. */
function topLevelAlternatives(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '[' || c === '(') depth++;
    else if (c === ']' || c === ')') depth--;
    else if (c === '|' && depth === 0 && text[i - 1] === ' ' && text[i + 1] === ' ') {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim());
}

/** The action words a usage alternative starts with: `set`, `[list]`, `bash|zsh|fish`. */
function leadingActions(alternative: string): string[] {
  const first = alternative.split(/\s+/)[0] ?? '';
  const bare = first.startsWith('[') && first.endsWith(']') ? first.slice(1, -1) : first;
  const words = bare.split('|');
  return words.every((w) => WORD.test(w)) ? words : [];
}

function actionsOf(spec: CommandSpec): string[] {
  const prefix = `crustcore ${spec.name}`;
  const actions: string[] = [];
  for (const rawLine of spec.usage.split('\n')) {
    const line = rawLine.trim();
    if (!line.startsWith(`${prefix} `)) continue;
    for (const alternative of topLevelAlternatives(line.slice(prefix.length + 1))) {
      actions.push(...leadingActions(alternative));
    }
  }
  return [...new Set(actions)];
}

export function completionOf(spec: CommandSpec): CommandCompletion {
  const flagValues = new Map<string, readonly string[]>();
  for (const match of spec.usage.matchAll(FLAG_WITH_CHOICES)) {
    const [, flag, choices] = match;
    if (flag !== undefined && choices !== undefined && !flagValues.has(flag)) flagValues.set(flag, choices.split('|'));
  }
  const flags = [...new Set([...spec.usage.matchAll(FLAG)].map((m) => m[0])), '--help'];
  return { name: spec.name, summary: spec.summary, actions: actionsOf(spec), flags, flagValues };
}

export const completionModel = (specs: readonly CommandSpec[]): readonly CommandCompletion[] => specs.map(completionOf);
