import { chmodSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect as nodeInspect } from 'node:util';
import { makeId, sha256Hex } from '@crustcore/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createReceiptKeyFile,
  decodeToolReceipt,
  findLastReceiptHash,
  GENESIS_RECEIPT_HASH,
  inspectLog,
  loadReceiptKey,
  openReceiptKey,
  ReceiptedToolOutput,
  ReceiptIssuer,
  receiptHash,
  receiptToJson,
  stateDirLayout,
  type ToolReceipt,
  verifyReceipt,
} from '../src/index.js';
import { openWriter, TASK, tempDir, testKey } from './helpers.js';

const dirs: Array<{ remove: () => void }> = [];
function dir(): string {
  const d = tempDir('receipt-');
  dirs.push(d);
  return d.path;
}
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

const request = {
  taskId: TASK,
  toolCallId: makeId('ToolCallId', 'read1'),
  toolName: 'read_file',
  args: { path: 'src/parser.ts' },
  result: 'export function parse() {}\n',
  modelText: 'export function parse() {}\n',
};

describe('receipts', () => {
  it('binds tool, args, result and place; the MAC verifies only with the same key', () => {
    const issuer = new ReceiptIssuer(testKey(1));
    const output = issuer.issue({ ...request, eventSeq: 5 });
    const r = output.receipt;
    expect(r.toolNameHash).toBe(sha256Hex('read_file'));
    expect(r.argsHash).toBe(sha256Hex('{"path":"src/parser.ts"}'));
    expect(r.resultHash).toBe(sha256Hex(request.result));
    expect(r.eventSeq).toBe(5);
    expect(r.prevReceiptHash).toBe(GENESIS_RECEIPT_HASH);
    expect(verifyReceipt(testKey(1), r)).toEqual({ _tag: 'Right', right: output.receiptHash });
    expect(verifyReceipt(testKey(2), r)).toEqual({ _tag: 'Left', left: { _tag: 'ReceiptBadMac' } });
  });

  it('any changed field breaks the MAC (a forged receipt without the key fails)', () => {
    const r = new ReceiptIssuer(testKey(1)).issue({ ...request, eventSeq: 5 }).receipt;
    const forged: ToolReceipt[] = [
      { ...r, resultHash: sha256Hex('something else') },
      { ...r, eventSeq: 6 },
      { ...r, artifactHashes: [sha256Hex('x')] },
      { ...r, jobId: makeId('JobId', 'x') },
      { ...r, mac: sha256Hex('guess') },
    ];
    for (const f of forged) expect(verifyReceipt(testKey(1), f)._tag).toBe('Left');
  });

  it('chains receipts: each names the hash of the previous one', () => {
    const issuer = new ReceiptIssuer(testKey(1));
    const first = issuer.issue({ ...request, eventSeq: 1 });
    const second = issuer.issue({ ...request, toolCallId: makeId('ToolCallId', 'read2'), eventSeq: 2 });
    expect(second.receipt.prevReceiptHash).toBe(first.receiptHash);
    expect(receiptHash(first.receipt)).toBe(first.receiptHash);
  });

  it('round-trips through the log payload and the io-ts decoder, which rejects junk', () => {
    const r = new ReceiptIssuer(testKey(1)).issue({ ...request, eventSeq: 3 }).receipt;
    expect(decodeToolReceipt(receiptToJson(r))).toEqual({ _tag: 'Right', right: r });
    expect(decodeToolReceipt({ ...r, eventSeq: 0 })._tag).toBe('Left');
    expect(decodeToolReceipt({ ...r, taskId: 'nope' })._tag).toBe('Left');
    expect(decodeToolReceipt('receipt')._tag).toBe('Left');
  });

  it('record() appends the receipt at its own seq and inspect accepts it', async () => {
    const path = dir();
    const key = testKey(3);
    const writer = await openWriter(path, { key });
    const issuer = new ReceiptIssuer(key);
    const out = await issuer.record(writer, request, { timestampMs: 1 });
    expect(out._tag).toBe('Right');
    if (out._tag === 'Right') expect(out.right.receipt.eventSeq).toBe(1);
    // Bad frame input: no seq is taken and the issuer's chain does not move.
    const before = issuer.prevReceiptHash;
    const bad = await issuer.record(writer, request, { timestampMs: -5 });
    expect(bad._tag).toBe('Left');
    expect(issuer.prevReceiptHash).toBe(before);
    await issuer.record(writer, request, { timestampMs: 2 });
    await writer.close();
    const report = inspectLog({ ...stateDirLayout(path), key });
    expect(report.failure).toBeUndefined();
    expect(report.receiptsChecked).toBe(2);
    // A restarted runtime continues the chain from the log.
    expect(findLastReceiptHash(stateDirLayout(path).logPath)).toBe(issuer.prevReceiptHash);
  });
});

describe('ReceiptedToolOutput cannot be forged', () => {
  it('only the issuer builds one; a plain object or string cannot stand in', () => {
    const real = new ReceiptIssuer(testKey(1)).issue({ ...request, eventSeq: 1 });
    const deliver = (output: ReceiptedToolOutput): string => output.text;
    expect(deliver(real)).toBe(request.modelText);

    // @ts-expect-error a plain object with the same public shape is not a ReceiptedToolOutput
    const fake: ReceiptedToolOutput = { text: 'rm -rf ran fine', receipt: real.receipt, receiptHash: real.receiptHash };
    // @ts-expect-error a string is not a ReceiptedToolOutput
    deliver('the tool ran, trust me');
    // @ts-expect-error the constructor wants the issuer's private token
    expect(() => new ReceiptedToolOutput(Symbol('forged'), real.receipt, real.receiptHash, 'x')).toThrow(TypeError);
    expect(ReceiptedToolOutput.isReceipted(fake)).toBe(false);
    expect(ReceiptedToolOutput.isReceipted(real)).toBe(true);
  });

  it('serializes to text and receipt hash only', () => {
    const real = new ReceiptIssuer(testKey(1)).issue({ ...request, eventSeq: 1 });
    expect(JSON.parse(JSON.stringify(real))).toEqual({ text: request.modelText, receiptHash: real.receiptHash });
  });
});

describe('the receipt key file', () => {
  it('is created on first use with mode 0600 under $CRUSTCORE_HOME, then reused', () => {
    const home = join(dir(), 'home');
    const first = openReceiptKey({ CRUSTCORE_HOME: home });
    expect(first._tag).toBe('Right');
    const path = join(home, 'receipt.key');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);
    const second = openReceiptKey({ CRUSTCORE_HOME: home });
    if (first._tag !== 'Right' || second._tag !== 'Right') throw new Error('key');
    const r = new ReceiptIssuer(first.right).issue({ ...request, eventSeq: 1 }).receipt;
    expect(verifyReceipt(second.right, r)._tag).toBe('Right');
  });

  it('refuses a key file others can read or write, a symlink, or junk', () => {
    const base = dir();
    const path = join(base, 'receipt.key');
    expect(createReceiptKeyFile(path)._tag).toBe('Right');
    for (const mode of [0o644, 0o640, 0o604, 0o660, 0o602]) {
      chmodSync(path, mode);
      expect(loadReceiptKey(path)).toMatchObject({ _tag: 'Left', left: { _tag: 'KeyFileTooOpen' } });
    }
    chmodSync(path, 0o600);
    expect(loadReceiptKey(path)._tag).toBe('Right');
    const link = join(base, 'link.key');
    symlinkSync(path, link);
    expect(loadReceiptKey(link)._tag).toBe('Left');
    const junk = join(base, 'junk.key');
    writeFileSync(junk, 'not a key', { mode: 0o600 });
    expect(loadReceiptKey(junk)).toMatchObject({ _tag: 'Left', left: { _tag: 'KeyFileMalformed' } });
    mkdirSync(join(base, 'dir.key'));
    expect(loadReceiptKey(join(base, 'dir.key'))._tag).toBe('Left');
  });

  it('never shows its bytes', () => {
    const key = testKey(9);
    expect(String(key)).toBe('[receipt key]');
    expect(nodeInspect(key)).toBe('[receipt key]');
    expect(() => JSON.stringify({ key })).toThrow();
  });
});
