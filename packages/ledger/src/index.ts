export {
  type ArtifactError,
  type ArtifactRef,
  ArtifactStore,
  DEFAULT_MAX_ARTIFACT_BYTES,
  DEFAULT_PREVIEW_BYTES,
  describeArtifactError,
  outputHandle,
  type ToolOutput,
} from './artifacts.js';
export {
  ChainCheck,
  type ChainReport,
  checkChainBytes,
  INTEGRITY_REASONS,
  type IntegrityFailure,
  type IntegrityReason,
  integrityFailure,
  type TornTail,
} from './chain-check.js';
export type { CheckedPrefix, ReceiptRef } from './checked-prefix.js';
export { type ExportOptions, type ExportResult, exportJsonl, frameToJsonl, isPayloadDropped } from './export.js';
export {
  ACTORS,
  type Actor,
  type CorruptProblem,
  type DecodedFrame,
  decodeFrame,
  decodePayload,
  type EncodedFrame,
  encodeFrame,
  encodePayload,
  FIXED_HEADER_BYTES,
  FRAME_MAGIC,
  FRAME_VERSION,
  type FrameChainFields,
  type FrameDecode,
  type FrameInput,
  type FrameInputError,
  framePayloadBytes,
  GENESIS_HASH,
  HASH_BYTES,
  isValidKind,
  MAX_FRAME_BYTES,
  MAX_ID_BYTES,
  MAX_KIND_BYTES,
  MAX_PAYLOAD_BYTES,
  MIN_FRAME_BYTES,
  type PayloadError,
  type PreparedFrame,
  prepareFrame,
  REDACTIONS,
  type Redaction,
  sealFrame,
  TRAILER_BYTES,
  VISIBILITIES,
  type Visibility,
} from './frame.js';
export {
  checkHeadMac,
  decodeHead,
  EMPTY_HEAD,
  encodeHead,
  type Head,
  type HeadError,
  type HeadState,
  readHeadState,
} from './head.js';
export {
  artifactReferences,
  findLastReceiptHash,
  type InspectOptions,
  type InspectReport,
  inspectLog,
  isArtifactField,
} from './inspect.js';
export {
  CURRENT_BEHAVIOUR_FLAGS,
  decodeKernelOpening,
  KERNEL_BEHAVIOUR_FLAGS,
  type KernelOpening,
  kernelOpening,
  kernelReplay,
  type RecordedStep,
  type RecordStepError,
  recordKernelStep,
} from './kernel-record.js';
export { decodeKernelState, restoreKernel } from './kernel-state-codec.js';
export { ACTIONS_KIND, OPEN_KIND, RECEIPT_KIND, RECOVERED_KIND, SNAPSHOT_KIND } from './kinds.js';
// The writer lock, for tools that must keep writers out while they read (crustcore backup).
export { acquireLock, type FileLock, type LockError } from './lock.js';
export {
  type AppendAck,
  type AppendError,
  DEFAULT_MAX_BATCH_FRAMES,
  DEFAULT_MAX_PAYLOAD_BYTES,
  DEFAULT_MAX_QUEUED_FRAMES,
  defaultHeadPath,
  type LedgerOpenError,
  LedgerWriter,
  type LedgerWriterOptions,
  type RecoveryReport,
  type SyncMode,
  type WrittenFrame,
} from './log-writer.js';
export {
  MAX_HELD_FRAMES,
  type RebuildOptions,
  type RebuiltKernel,
  rebuildKernel,
  rebuildKernelYielding,
} from './rebuild.js';
export {
  decodeToolReceipt,
  GENESIS_RECEIPT_HASH,
  type ReceiptError,
  ReceiptedToolOutput,
  ReceiptIssuer,
  type ReceiptRequest,
  receiptHash,
  receiptMacMessage,
  receiptToJson,
  type ToolReceipt,
  verifyReceipt,
} from './receipt.js';
export {
  createReceiptKeyFile,
  crustcoreHome,
  describeReceiptKeyError,
  loadReceiptKey,
  openReceiptKey,
  ReceiptKey,
  type ReceiptKeyError,
  receiptKeyPath,
} from './receipt-key.js';
export {
  checkEventHeader,
  type ReplayableKernel,
  Replayer,
  type ReplayFrame,
  type ReplayKernel,
  type ReplaySummary,
} from './replay.js';
export { type FrameVisitor, type ScanEnd, scanBytes, scanFile, scanFileYielding } from './scan.js';
export { nobleSha256, nodeSha256, type Sha256, toHex } from './sha256.js';
export {
  type CheckedSnapshot,
  DEFAULT_SNAPSHOT_EVERY_FRAMES,
  IDLE_SNAPSHOT_MAX_STATE_BYTES,
  IDLE_SNAPSHOT_MIN_FRAMES,
  MIN_SNAPSHOT_EVERY_FRAMES,
  SNAPSHOT_BYTES_FACTOR,
  SNAPSHOT_MAC_DOMAIN,
  type SnapshotCovers,
  SnapshotWitness,
  snapshotFrame,
  snapshotMacMessage,
  type UntrustedSnapshot,
} from './snapshot.js';
export { ARTIFACTS_DIR, HEAD_FILE, type LedgerLayout, LOG_FILE, stateDirLayout } from './state-dir.js';
export {
  renderStory,
  type StoryApproval,
  StoryBuilder,
  type StoryCommand,
  type StoryEvent,
  type StoryVerification,
  type TaskOutcome,
  type TaskStory,
} from './story.js';
