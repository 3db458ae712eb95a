/** A temporary ledger directory with a receipt key, for tests of the spine. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ArtifactStore,
  createReceiptKeyFile,
  type DecodedFrame,
  type InspectOptions,
  inspectLog,
  kernelReplay,
  nodeSha256,
  type ReceiptKey,
  scanFile,
} from '@crustcore/ledger';
import { LedgerSpine } from '../src/index.js';

export interface TempLedger {
  readonly dir: string;
  readonly logPath: string;
  readonly key: ReceiptKey;
  open(options?: { readonly snapshotEveryFrames?: number }): Promise<LedgerSpine>;
  replay(): ReturnType<typeof inspectLog>;
  /** `inspect --replay` of this ledger within `scope` (fromSnapshot, resume, until), or all of it. */
  check(scope?: Pick<InspectOptions, 'fromSnapshot' | 'resume' | 'until'>): ReturnType<typeof inspectLog>;
  remove(): void;
}

export function tempLedger(): TempLedger {
  const dir = mkdtempSync(join(tmpdir(), 'crustcore-spine-'));
  const key = createReceiptKeyFile(join(dir, 'receipt.key'));
  if (key._tag === 'Left') throw new Error(JSON.stringify(key.left));
  const logPath = join(dir, 'events.log');
  let clock = 1_000;
  const check: TempLedger['check'] = (scope = {}) =>
    inspectLog({
      logPath,
      artifactsDir: join(dir, 'artifacts'),
      key: key.right,
      kernel: kernelReplay(),
      replay: true,
      ...scope,
    });
  return {
    dir,
    logPath,
    key: key.right,
    open: (options = {}) =>
      LedgerSpine.open({
        logPath,
        artifacts: new ArtifactStore(join(dir, 'artifacts')),
        key: key.right,
        clockMs: () => clock++,
        ...options,
      }),
    replay: () => check(),
    check,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Every frame of a log, each with its own copy of its bytes (safe to keep while the file changes). */
export function logFrames(logPath: string): DecodedFrame[] {
  const frames: DecodedFrame[] = [];
  scanFile(logPath, 0, nodeSha256, (frame) => {
    frames.push({ ...frame, bytes: Uint8Array.from(frame.bytes) });
    return true;
  });
  return frames;
}

/** The head file beside a log (the writer's default: `.log` becomes `.head`). */
export const headPathOf = (logPath: string): string => logPath.replace(/\.log$/, '.head');

/** A temporary ledger that `cleanup` (a test file's after-each list) removes. */
export function ledgerRemovedBy(cleanup: (() => void)[]): TempLedger {
  const current = tempLedger();
  cleanup.push(() => current.remove());
  return current;
}
