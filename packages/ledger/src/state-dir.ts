/**
 * The on-disk layout of a CrustCore state directory, as far as the ledger
 * is concerned: `<dir>/events.log`, `<dir>/events.head`, `<dir>/artifacts/`.
 */
import { join } from 'node:path';

export interface LedgerLayout {
  readonly logPath: string;
  readonly headPath: string;
  readonly artifactsDir: string;
}

export const LOG_FILE = 'events.log';
export const HEAD_FILE = 'events.head';
export const ARTIFACTS_DIR = 'artifacts';

export function stateDirLayout(dir: string): LedgerLayout {
  return { logPath: join(dir, LOG_FILE), headPath: join(dir, HEAD_FILE), artifactsDir: join(dir, ARTIFACTS_DIR) };
}
