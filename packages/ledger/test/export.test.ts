import { makeId, sha256Hex } from '@crustcore/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { exportJsonl, stateDirLayout } from '../src/index.js';
import { concat, mustAppend, note, openWriter, readLog, tempDir, writeLog } from './helpers.js';

const dirs: Array<{ remove: () => void }> = [];
function dir(): string {
  const d = tempDir('export-');
  dirs.push(d);
  return d.path;
}
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

async function sampleLog(path: string): Promise<void> {
  const writer = await openWriter(path);
  await mustAppend(writer, note(1));
  await mustAppend(writer, {
    ...note(2),
    visibility: 'model-visible',
    payload: { text: 'tool output ✓', n: [1, 2.5] },
  });
  await mustAppend(writer, {
    ...note(3),
    visibility: 'user',
    redaction: 'contains-handles',
    payload: { secret: 'handle s_1' },
  });
  await mustAppend(writer, { ...note(4), visibility: 'user', jobId: makeId('JobId', 'w1'), payload: 'hello' });
  await writer.close();
}

function exportLines(path: string, redacted: boolean): Array<Record<string, unknown>> {
  const lines: string[] = [];
  const result = exportJsonl({ logPath: stateDirLayout(path).logPath, redacted }, (line) => lines.push(line));
  expect(result).toEqual({ _tag: 'Complete', frames: lines.length });
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Rebuilds the log bytes from export lines: header ‖ canonical payload ‖ hash ‖ length. */
function rebuild(lines: ReadonlyArray<Record<string, unknown>>): Uint8Array {
  return concat(
    lines.map((line) => {
      const payload = new TextEncoder().encode(JSON.stringify(line.payload));
      const trailer = new Uint8Array(4);
      new DataView(trailer.buffer).setUint32(0, line.length as number, true);
      return concat([
        Buffer.from(line.header as string, 'hex'),
        payload,
        Buffer.from(line.hash as string, 'hex'),
        trailer,
      ]);
    }),
  );
}

describe('JSONL export', () => {
  it('is lossless: the file can be rebuilt byte for byte from the lines', async () => {
    const path = dir();
    await sampleLog(path);
    const lines = exportLines(path, false);
    expect(lines.map((l) => l.seq)).toEqual([1, 2, 3, 4]);
    expect(lines[3]).toMatchObject({
      kind: 'test.note',
      jobId: 'j_w1',
      visibility: 'user',
      payload: 'hello',
      actor: 'runtime',
    });
    expect(Buffer.from(rebuild(lines)).equals(Buffer.from(readLog(path)))).toBe(true);
  });

  it('every line carries what is needed to check the chain', async () => {
    const path = dir();
    await sampleLog(path);
    let prev = '0'.repeat(64);
    for (const line of exportLines(path, true)) {
      expect(sha256Hex(Buffer.from(line.header as string, 'hex'))).toBe(line.hash);
      expect(line.prevHash).toBe(prev);
      prev = line.hash as string;
    }
  });

  it('--redacted drops internal and secret-adjacent payloads but keeps their hashes', async () => {
    const path = dir();
    await sampleLog(path);
    const lines = exportLines(path, true);
    expect(lines.map((l) => ('payload' in l ? 'kept' : l.payloadDropped === true ? 'dropped' : '?'))).toEqual([
      'dropped',
      'kept',
      'dropped',
      'kept',
    ]);
    expect(JSON.stringify(lines)).not.toContain('handle s_1');
    expect(lines[0]?.payloadHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('stops at a damaged frame and says so; an incomplete tail is not damage', async () => {
    const path = dir();
    await sampleLog(path);
    const bytes = readLog(path);
    writeLog(path, bytes.subarray(0, bytes.length - 10));
    const lines: string[] = [];
    expect(exportJsonl({ logPath: stateDirLayout(path).logPath }, (l) => lines.push(l))).toMatchObject({
      _tag: 'IncompleteTail',
      frames: 3,
    });
    const damaged = Uint8Array.from(bytes);
    damaged[200]! ^= 0x40;
    writeLog(path, damaged);
    expect(exportJsonl({ logPath: stateDirLayout(path).logPath }, () => undefined)).toMatchObject({
      _tag: 'Damaged',
      frames: 1,
    });
  });
});
