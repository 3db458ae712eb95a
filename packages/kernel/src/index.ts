export type { Brand } from './brand.js';
export { canonicalJson, hashJson, type Json, sha256Hex } from './hash.js';
export {
  type ApprovalId,
  type ArtifactId,
  type EventSeq,
  type Hash32,
  ID_PREFIX,
  type IdError,
  type IdKind,
  isHash32,
  isId,
  type JobId,
  makeId,
  parseEventSeq,
  parseHash32,
  parseId,
  type SecretId,
  type TaskId,
  type ToolCallId,
} from './ids.js';
export { err, isErr, isOk, type Left, ok, type Result, type Right } from './result.js';
