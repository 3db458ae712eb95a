/**
 * Opening a ledger: one holder at a time (a second opener gets the typed
 * LedgerBusyError, never a second kernel), and a log that says it was written
 * with behaviour this version does not know is not opened.
 */
import { kernelOpening, LedgerWriter, OPEN_KIND } from '@crustcore/ledger';
import { afterEach, describe, expect, it } from 'vitest';
import { LedgerBusyError, LedgerOpenFailed } from '../src/index.js';
import { type TempLedger, tempLedger } from './spine-helpers.js';

let ledger: TempLedger | null = null;
afterEach(() => ledger?.remove());

describe('LedgerSpine.open', () => {
  it('a second opener while the ledger is held gets LedgerBusyError; after close it opens', async () => {
    ledger = tempLedger();
    const first = await ledger.open();
    const second = await ledger.open().then(
      () => null,
      (error: unknown) => error,
    );
    expect(second).toBeInstanceOf(LedgerBusyError);
    expect((second as LedgerBusyError).pid).toBe(process.pid);
    expect((second as Error).message).toMatch(/in use by process \d+.*try again/);
    await first.close();
    const third = await ledger.open();
    await third.close();
    // One kernel.open frame: the second successful open continued the first's kernel.
    expect(ledger.replay().failure).toBeUndefined();
  });

  it('refuses a log whose kernel.open lists a behaviour flag this version does not know', async () => {
    ledger = tempLedger();
    const writer = await LedgerWriter.open({ logPath: ledger.logPath, key: ledger.key });
    if (writer._tag === 'Left') throw new Error(JSON.stringify(writer.left));
    const future = { ...kernelOpening(), flags: [1, 2, 99] };
    await writer.right.append({
      kind: OPEN_KIND,
      actor: 'runtime',
      visibility: 'internal',
      timestampMs: 1,
      payload: JSON.parse(JSON.stringify(future)),
    });
    await writer.right.close();
    const opened = await ledger.open().then(
      () => null,
      (error: unknown) => error,
    );
    expect(opened).toBeInstanceOf(LedgerOpenFailed);
    expect((opened as Error).message).toMatch(/unknown behaviour flag\(s\) 99/);
  });
});
