/** A temporary ledger directory with a receipt key, for tests of the spine. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArtifactStore, createReceiptKeyFile, inspectLog, kernelReplay, type ReceiptKey } from '@crustcore/ledger';
import { LedgerSpine } from '../src/index.js';

export interface TempLedger {
  readonly dir: string;
  readonly logPath: string;
  readonly key: ReceiptKey;
  open(options?: { readonly snapshotEveryFrames?: number }): Promise<LedgerSpine>;
  replay(): ReturnType<typeof inspectLog>;
  remove(): void;
}

export function tempLedger(): TempLedger {
  const dir = mkdtempSync(join(tmpdir(), 'crustcore-spine-'));
  const key = createReceiptKeyFile(join(dir, 'receipt.key'));
  if (key._tag === 'Left') throw new Error(JSON.stringify(key.left));
  const logPath = join(dir, 'events.log');
  let clock = 1_000;
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
    replay: () =>
      inspectLog({
        logPath,
        artifactsDir: join(dir, 'artifacts'),
        key: key.right,
        kernel: kernelReplay(),
        replay: true,
      }),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
