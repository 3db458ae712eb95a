/**
 * What a detector is, and the builders the catalogs use. Every detector is a
 * regex with two groups, (context kept visible)(value redacted), that is run
 * STICKY at candidate positions only: a gate (gate.ts) finds the detector's
 * anchors — short literals every match contains — in one pass over the text,
 * and the regex is tried where an anchor says a match could start. So a
 * detector's cost is paid where its anchor occurs, not at every character,
 * and what it finds depends only on the text around a position (which is
 * what keeps streaming output identical to a one-shot scan).
 */
import type { DetectorId } from './detector-ids.js';

/**
 * A literal every match of a detector contains. Usually the match starts at
 * the anchor; `back` says how far before it a match may start (a Telegram
 * token's digits before `:A`) and which characters may stand there.
 */
export interface Anchor {
  /** At least two characters, from [A-Za-z0-9] and `-_.:/~=+`. */
  readonly text: string;
  readonly caseInsensitive: boolean;
  readonly back: { readonly chars: string; readonly max: number } | null;
}

export interface Detector {
  readonly id: DetectorId;
  /** Source of a regex with groups (context)(value). */
  readonly source: string;
  readonly flags: 'g' | 'gi';
  /** No match is longer than this (plus one character of look-ahead). */
  readonly maxMatchLength: number;
  /** A literal every match starts with, for detectors whose bound is large; null otherwise. */
  readonly trigger: string | null;
  /** Where a match can be; see Anchor. */
  readonly anchors: readonly Anchor[];
  /** A second opinion on the value (and the context before it): rejects placeholders and look-alikes. */
  readonly accept: ((value: string, context?: string) => boolean) | null;
}

// ─── builders ─────────────────────────────────────────────────────────────

export const exactly = (text: string): Anchor => ({ text, caseInsensitive: false, back: null });
export const anyCase = (text: string): Anchor => ({ text, caseInsensitive: true, back: null });
export const after = (text: string, chars: string, max: number): Anchor => ({
  text,
  caseInsensitive: false,
  back: { chars, max },
});

/** No letter or digit right before a token: it is not the tail of a longer word or blob. */
export const TOKEN_START = '(?<![A-Za-z0-9])';

export interface TokenSpec {
  readonly id: DetectorId;
  /** Literal prefixes; each is also an anchor. */
  readonly prefixes: readonly string[];
  /** Regex source of the whole token (prefix included). */
  readonly token: string;
  readonly maxLength: number;
  /** Characters that may not follow the token (a character class body), or null for open-ended tokens. */
  readonly notFollowedBy: string | null;
  readonly accept?: (value: string) => boolean;
  readonly trigger?: string;
  /** Anchors other than the prefixes (tokens whose distinctive part is not at the start). */
  readonly anchors?: readonly Anchor[];
}

/** A token recognised by its own shape: the whole match is the value, nothing is context. */
export function tokenDetector(spec: TokenSpec): Detector {
  const end = spec.notFollowedBy === null ? '' : `(?![${spec.notFollowedBy}])`;
  return {
    id: spec.id,
    source: `${TOKEN_START}()(${spec.token})${end}`,
    flags: 'g',
    maxMatchLength: spec.maxLength,
    trigger: spec.trigger ?? null,
    anchors: spec.anchors ?? spec.prefixes.map(exactly),
    accept: spec.accept ?? null,
  };
}

/** Regex-escapes a literal. */
export const literal = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/** `(?:a|b|c)` of escaped literals. */
export const oneOf = (texts: readonly string[]): string => `(?:${texts.map(literal).join('|')})`;

export const DIGITS = '0123456789';
export const HEX_LOWER = '0123456789abcdef';
export const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
export const BASE64URL = `${ALNUM}_-`;
