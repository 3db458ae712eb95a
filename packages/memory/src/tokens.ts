/**
 * Tokens of text and code for both retrieval channels. An identifier is kept
 * whole (`resolveWorkspaceAlias`, lower-cased) and also split into its words
 * (`resolve`, `workspace`, `alias`), so a memory about "workspace aliases"
 * and one naming the function both share features with either query.
 */

/** Words too common to say anything about a memory. */
const STOPWORDS = new Set([
  'a',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'by',
  'for',
  'from',
  'in',
  'is',
  'it',
  'of',
  'on',
  'or',
  'that',
  'the',
  'this',
  'to',
  'was',
  'with',
  'we',
  'you',
  'not',
  'do',
  'use',
]);

/** Bound on tokens read from one text: memories and goals are short; this caps hostile input. */
export const MAX_TOKENS = 512;

const WORD = /[\p{L}\p{N}_$.-]+/gu;

/** The words of an identifier: camelCase, PascalCase, snake_case, kebab-case, dotted, digits. */
function identifierParts(word: string): string[] {
  return word
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
    .split(/[\s_$.-]+/u)
    .map((part) => part.toLowerCase())
    .filter((part) => part.length > 1);
}

/** Whole identifiers and their parts, lower-cased, stopwords dropped, in order of appearance. */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(WORD)) {
    if (out.length >= MAX_TOKENS) break;
    const word = match[0].replace(/^[.-]+|[.-]+$/g, '');
    if (word === '') continue;
    const whole = word.toLowerCase();
    const parts = identifierParts(word);
    if (!STOPWORDS.has(whole) && whole.length > 1) out.push(whole);
    if (parts.length > 1) for (const part of parts) if (!STOPWORDS.has(part)) out.push(part);
  }
  return out.slice(0, MAX_TOKENS);
}

/**
 * Terms for the lexical channel: distinct whole words of the query, longest
 * first (a long identifier says more than "fix"), at most `limit`.
 */
export function lexicalTerms(text: string, limit = 12): string[] {
  const seen = new Set<string>();
  for (const match of text.matchAll(WORD)) {
    const word = match[0].replace(/^[.-]+|[.-]+$/g, '').toLowerCase();
    if (word.length >= 3 && !STOPWORDS.has(word)) seen.add(word.slice(0, 64));
    if (seen.size >= MAX_TOKENS) break;
  }
  return [...seen].sort((a, b) => b.length - a.length || (a < b ? -1 : 1)).slice(0, limit);
}
