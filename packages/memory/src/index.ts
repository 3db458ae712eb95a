export {
  type CapsuleInput,
  type ContextBudget,
  type ContextBundle,
  type ContextInput,
  DEFAULT_CONTEXT_BUDGET,
  type RelatedCode,
  selectContext,
} from './context.js';
export { cosine, DEFAULT_DIMENSIONS, type Embedder, HashingEmbedder } from './embedder.js';
export {
  describeMemoryError,
  type MemoryError,
  type MemoryInvalid,
  type MemoryNotFound,
  type MemoryStoreUnavailable,
} from './errors.js';
export {
  failureMemoriesOfTask,
  type LearnReport,
  type LedgerFrameView,
  learnFromLedger,
  readLedgerFrames,
} from './learn.js';
export { type OpenedMemory, type OpenMemoryOptions, openMemoryStore } from './open.js';
export {
  ageDays,
  type Candidate,
  type Clock,
  DECAY_PER_DAY,
  decayedScore,
  FUSION_K,
  type RankedMemory,
  rankCandidates,
} from './ranking.js';
export { type Capabilities, IN_PROCESS_SCAN_LIMIT } from './search.js';
export { type ListOptions, MAX_RESULTS, MemoryStore, type MemoryStoreOptions, type SearchOptions } from './store.js';
export { lexicalTerms, tokenize } from './tokens.js';
export {
  isMemoryKind,
  MEMORY_KINDS,
  MEMORY_LIMITS,
  MEMORY_SOURCES,
  type Memory,
  type MemoryKind,
  type MemorySource,
  type NewMemory,
  NewMemoryCodec,
} from './types.js';
