/**
 * The latest patch of each task, kept under `$CRUSTCORE_HOME/patches/<taskId>/`
 * (`patch.diff` + `record.json`), so `crustcore diff TASK` can show or export
 * it after the run. Written atomically; read back through an io-ts codec.
 * The record is a copy of evidence, never authority: reading it back does
 * not produce a VerifiedPatch.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { err, ok, type Result } from '@crustcore/kernel';
import * as t from 'io-ts';
import { patchesDir } from './home.js';
import { fsyncDirectory, unlinkIfPresent, writeFileAtomic, writeNewFileSynced } from './journal/durable.js';
import type { UnverifiedPatch } from './patch.js';
import type { VerifiedPatch } from './verified-patch.js';

const RecordCodec = t.type({
  taskId: t.string,
  status: t.keyof({ verified: null, unverified: null }),
  patchSha256: t.string,
  baseCommit: t.string,
  treeId: t.string,
  files: t.array(
    t.type({
      status: t.string,
      path: t.string,
      oldPath: t.union([t.string, t.null]),
      binary: t.boolean,
      fileClass: t.string,
    }),
  ),
  risks: t.array(t.type({ kind: t.string, severity: t.string, detail: t.string })),
  evidence: t.union([t.UnknownRecord, t.null]),
});

export type PatchRecord = t.TypeOf<typeof RecordCodec>;

export interface StoredPatch {
  readonly record: PatchRecord;
  readonly bytes: Uint8Array;
}

export type PatchStoreError =
  | { readonly _tag: 'NoPatch'; readonly taskId: string; readonly message: string }
  | { readonly _tag: 'PatchRecordDamaged'; readonly taskId: string; readonly message: string };

const TASK_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Saves the task's latest patch (verified or not). Replaces the previous one atomically, file by file. */
export function savePatchRecord(
  home: string,
  taskId: string,
  patch: UnverifiedPatch,
  verified: VerifiedPatch | null,
): void {
  if (!TASK_ID.test(taskId)) return;
  const dir = join(patchesDir(home), taskId);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const record: PatchRecord = {
    taskId,
    status: verified === null ? 'unverified' : 'verified',
    patchSha256: patch.sha256,
    baseCommit: patch.baseCommit,
    treeId: patch.treeId,
    files: patch.files.map((f) => ({
      status: f.status,
      path: f.path,
      oldPath: f.oldPath,
      binary: f.binary,
      fileClass: f.fileClass,
    })),
    risks: (verified?.risks ?? patch.risks).map((r) => ({ kind: r.kind, severity: r.severity, detail: r.detail })),
    evidence: verified === null ? null : (JSON.parse(JSON.stringify(verified.evidence())) as Record<string, unknown>),
  };
  writeFileAtomic(join(dir, 'patch.diff'), patch.bytes, dir);
  writeFileAtomic(join(dir, 'record.json'), new TextEncoder().encode(`${JSON.stringify(record, null, 2)}\n`), dir);
}

/** Loads a task's patch; the bytes are checked against the recorded hash. */
export function loadPatchRecord(home: string, taskId: string): Result<PatchStoreError, StoredPatch> {
  if (!TASK_ID.test(taskId)) return err({ _tag: 'NoPatch', taskId, message: 'not a task id' });
  const dir = join(patchesDir(home), taskId);
  let text: string;
  let bytes: Uint8Array;
  try {
    text = readFileSync(join(dir, 'record.json'), 'utf8');
    bytes = new Uint8Array(readFileSync(join(dir, 'patch.diff')));
  } catch {
    return err({ _tag: 'NoPatch', taskId, message: `no patch recorded for ${taskId}` });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return err({ _tag: 'PatchRecordDamaged', taskId, message: 'record.json is not JSON' });
  }
  const decoded = RecordCodec.decode(raw);
  if (decoded._tag === 'Left')
    return err({ _tag: 'PatchRecordDamaged', taskId, message: 'record.json has the wrong shape' });
  if (createHash('sha256').update(bytes).digest('hex') !== decoded.right.patchSha256) {
    return err({ _tag: 'PatchRecordDamaged', taskId, message: 'patch.diff does not match the recorded sha256' });
  }
  return ok({ record: decoded.right, bytes });
}

/**
 * Writes a patch `git apply` accepts (the exact verified bytes, binary hunks
 * included) to `destination`, atomically. Refuses to overwrite an existing file.
 */
export function exportPatch(
  source: VerifiedPatch | StoredPatch,
  destination: string,
): Result<{ readonly _tag: 'ExportFailed'; readonly message: string }, string> {
  const bytes = 'record' in source ? source.bytes : source.patchBytes();
  const temp = `${destination}.crustcore-export.tmp`;
  try {
    unlinkIfPresent(temp);
    writeNewFileSynced(temp, bytes, 0o644);
    // Never clobber: an existing destination is refused.
    if (existsSync(destination)) {
      unlinkIfPresent(temp);
      return err({ _tag: 'ExportFailed', message: `${destination} already exists` });
    }
    renameSync(temp, destination);
    fsyncDirectory(dirname(destination));
    return ok(destination);
  } catch (error) {
    unlinkIfPresent(temp);
    return err({ _tag: 'ExportFailed', message: (error as Error).message });
  }
}
