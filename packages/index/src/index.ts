/**
 * @crustcore/index — the repo capsule: files by role, the detected stack and
 * its commands, and code symbols (tree-sitter grammars as WASM for
 * TypeScript/TSX/JavaScript, Python, Go and Rust; a plain-text fallback
 * elsewhere), built incrementally by git blob id. A pack: the nano build
 * never links it.
 */
export { type Analysis, analyseText, MAX_SYMBOLS_PER_FILE } from './analyse.js';
export { buildIndex, type IndexOptions, type IndexResult, type IndexStats } from './build.js';
export { cacheFileOf, INDEXER_VERSION } from './cache.js';
export {
  type CapsuleFile,
  CapsuleFileCodec,
  type CodeSymbol,
  CodeSymbolCodec,
  type RepoCapsule,
  RepoCapsuleCodec,
  type SymbolKind,
  SymbolKindCodec,
} from './capsule.js';
export { type IndexError, type IndexErrorReason, indexError } from './errors.js';
export { capsuleForGoal, GOAL_RELATED_LIMIT, type GoalCapsule, type GoalCode, goalWords } from './goal.js';
export { type FileRole, languageOf, roleOf } from './roles.js';
export { detectStack, type Ecosystem, MANIFEST_NAMES, type StackEntry, type StackReport } from './stack.js';
export { extractSymbols } from './symbols/extract.js';
export { plainSymbols } from './symbols/plain.js';
export { type GrammarName, isGrammarName } from './symbols/queries.js';
