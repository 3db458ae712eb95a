/**
 * One file's entry: its role and language from the path, and — from its
 * text — its line count and symbols (a grammar when there is one, the
 * plain-text fallback for other languages, none for docs, config and data).
 */
import type { CapsuleFile, CodeSymbol } from './capsule.js';
import { languageOf, roleOf } from './roles.js';
import { extractSymbols } from './symbols/extract.js';
import { plainSymbols } from './symbols/plain.js';
import { isGrammarName } from './symbols/queries.js';

/** Per file: enough for a map, bounded so one generated file cannot swell the capsule. */
export const MAX_SYMBOLS_PER_FILE = 2000;

export type Analysis = Pick<CapsuleFile, 'lines' | 'symbolSource' | 'symbols'>;

export const pathFacts = (path: string): Pick<CapsuleFile, 'role' | 'language'> => ({
  role: roleOf(path),
  language: languageOf(path),
});

const countLines = (text: string): number => {
  if (text === '') return 0;
  let lines = 1;
  for (let at = text.indexOf('\n'); at >= 0 && at < text.length - 1; at = text.indexOf('\n', at + 1)) lines++;
  return lines;
};

const looksBinary = (text: string): boolean => text.includes('\u0000') || text.includes('\ufffd');

export async function analyseText(language: string | null, text: string): Promise<Analysis> {
  if (looksBinary(text)) return { lines: 0, symbolSource: 'binary', symbols: [] };
  const lines = countLines(text);
  let symbols: readonly CodeSymbol[];
  let symbolSource: Analysis['symbolSource'];
  if (isGrammarName(language)) {
    symbols = await extractSymbols(language, text);
    symbolSource = 'tree-sitter';
  } else if (language !== null) {
    symbols = plainSymbols(text);
    symbolSource = 'plain';
  } else {
    return { lines, symbolSource: 'none', symbols: [] };
  }
  return { lines, symbolSource, symbols: symbols.slice(0, MAX_SYMBOLS_PER_FILE) };
}
