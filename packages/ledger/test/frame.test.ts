import { randomBytes } from 'node:crypto';
import { canonicalJson, makeId, sha256Hex } from '@crustcore/kernel';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeFrame,
  decodePayload,
  encodeFrame,
  FIXED_HEADER_BYTES,
  FRAME_MAGIC,
  FRAME_VERSION,
  type FrameInput,
  GENESIS_HASH,
  MIN_FRAME_BYTES,
  nobleSha256,
  nodeSha256,
  TRAILER_BYTES,
  toHex,
} from '../src/index.js';

const input: FrameInput = {
  kind: 'TaskCreated',
  actor: 'kernel',
  visibility: 'user',
  redaction: 'contains-handles',
  timestampMs: 1_733_000_000_123,
  taskId: makeId('TaskId', 'abc'),
  jobId: makeId('JobId', 'j9'),
  payload: { goal: 'fix the parser', z: [1, 2.5, null, true], a: 'ünïcödé ✓' },
};

function encodeOrThrow(seq: number, prevHash: Uint8Array, frame: FrameInput = input, commit = true) {
  const encoded = encodeFrame({ seq, prevHash, commit }, frame, nodeSha256);
  if (encoded._tag === 'Left') throw new Error(encoded.left.reason);
  return encoded.right;
}

describe('sha256 implementations', () => {
  it('node:crypto and @noble/hashes give identical digests (and match the kernel)', () => {
    for (const size of [0, 1, 55, 56, 63, 64, 65, 1000, 65_537]) {
      const bytes = new Uint8Array(randomBytes(size));
      const node = toHex(nodeSha256(bytes));
      expect(toHex(nobleSha256(bytes))).toBe(node);
      expect(sha256Hex(bytes)).toBe(node);
    }
  });

  it('frames encoded with either implementation are byte-identical', () => {
    const a = encodeFrame({ seq: 3, prevHash: GENESIS_HASH, commit: false }, input, nodeSha256);
    const b = encodeFrame({ seq: 3, prevHash: GENESIS_HASH, commit: false }, input, nobleSha256);
    expect(a._tag === 'Right' && b._tag === 'Right' && toHex(a.right.bytes) === toHex(b.right.bytes)).toBe(true);
  });
});

describe('frame encoding', () => {
  it('round-trips every header field and the payload', () => {
    const frame = encodeOrThrow(42, new Uint8Array(32).fill(9));
    const decoded = decodeFrame(frame.bytes, 0, nodeSha256);
    expect(decoded._tag).toBe('Frame');
    if (decoded._tag !== 'Frame') return;
    const f = decoded.frame;
    expect([f.seq, f.kind, f.actor, f.visibility, f.redaction, f.timestampMs, f.taskId, f.jobId, f.commit]).toEqual([
      42,
      'TaskCreated',
      'kernel',
      'user',
      'contains-handles',
      1_733_000_000_123,
      't_abc',
      'j_j9',
      true,
    ]);
    expect(toHex(f.prevHash)).toBe('09'.repeat(32));
    expect(decoded.end).toBe(frame.bytes.length);
    expect(decodePayload(f)).toEqual({ _tag: 'Right', right: input.payload });
  });

  it('hashes the bytes as written: frame hash = sha256(header), payload hash = sha256(payload)', () => {
    const frame = encodeOrThrow(1, GENESIS_HASH);
    const payload = new TextEncoder().encode(canonicalJson(input.payload));
    expect(toHex(frame.bytes.subarray(34, 66))).toBe(sha256Hex(payload));
    expect(toHex(frame.hash)).toBe(sha256Hex(frame.bytes.subarray(0, frame.headerLength)));
    expect(frame.bytes.length).toBe(frame.headerLength + payload.length + TRAILER_BYTES);
    // Length prefix and trailer agree.
    const view = new DataView(frame.bytes.buffer);
    expect(view.getUint32(0, true)).toBe(frame.bytes.length);
    expect(view.getUint32(frame.bytes.length - 4, true)).toBe(frame.bytes.length);
    expect(frame.headerLength).toBe(FIXED_HEADER_BYTES + 'TaskCreated'.length + 1 + 5 + 1 + 4);
  });

  it('rejects bad input as values, before any bytes exist', () => {
    const bad = (patch: Partial<FrameInput>) =>
      encodeFrame({ seq: 1, prevHash: GENESIS_HASH, commit: true }, { ...input, ...patch }, nodeSha256);
    expect(bad({ kind: '' })).toMatchObject({ _tag: 'Left', left: { field: 'kind' } });
    expect(bad({ kind: 'has space' })).toMatchObject({ _tag: 'Left', left: { field: 'kind' } });
    expect(bad({ kind: 'x'.repeat(129) })).toMatchObject({ _tag: 'Left', left: { field: 'kind' } });
    expect(bad({ timestampMs: -1 })).toMatchObject({ _tag: 'Left', left: { field: 'timestampMs' } });
    expect(bad({ timestampMs: 1.5 })).toMatchObject({ _tag: 'Left', left: { field: 'timestampMs' } });
    expect(bad({ payload: { x: Number.NaN } })).toMatchObject({ _tag: 'Left', left: { field: 'payload' } });
    // @ts-expect-error a raw string is not a TaskId
    expect(bad({ taskId: 'not-an-id' })).toMatchObject({ _tag: 'Left', left: { field: 'taskId' } });
    expect(
      encodeFrame(
        { seq: 1, prevHash: GENESIS_HASH, commit: true },
        { ...input, payload: 'x'.repeat(100) },
        nodeSha256,
        50,
      ),
    ).toMatchObject({ _tag: 'Left', left: { field: 'payload' } });
  });

  it('a frame cut anywhere reads as Incomplete, never as a frame', () => {
    const frame = encodeOrThrow(7, GENESIS_HASH);
    for (let cut = 1; cut < frame.bytes.length; cut++) {
      expect(decodeFrame(frame.bytes.subarray(0, cut), 0, nodeSha256)._tag).toBe('Incomplete');
    }
  });

  it('every single-bit flip of a complete frame reads as Corrupt (never Incomplete, never a frame)', () => {
    const frame = encodeOrThrow(7, GENESIS_HASH);
    for (let bit = 0; bit < frame.bytes.length * 8; bit++) {
      const copy = Uint8Array.from(frame.bytes);
      copy[bit >> 3]! ^= 1 << (bit & 7);
      expect(decodeFrame(copy, 0, nodeSha256)._tag, `bit ${bit}`).toBe('Corrupt');
    }
  });
});

describe('frame decoder fuzzing', () => {
  const frames = [
    encodeOrThrow(1, GENESIS_HASH),
    encodeOrThrow(2, new Uint8Array(32).fill(1), { ...input, payload: [] }),
  ];

  /** Decodes `bytes` placed inside a bigger buffer of noise: reading outside the view would change the answer. */
  function decodeInNoise(bytes: Uint8Array, noise: number) {
    const backing = new Uint8Array(bytes.length + 64).fill(noise);
    backing.set(bytes, 32);
    return decodeFrame(backing.subarray(32, 32 + bytes.length), 0, nodeSha256);
  }

  it('random bytes never crash it, never read outside the buffer, always give a typed answer', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), (bytes) => {
        const a = decodeInNoise(bytes, 0x00);
        const b = decodeInNoise(bytes, 0xff);
        expect(['Frame', 'Incomplete', 'Corrupt']).toContain(a._tag);
        expect(JSON.stringify(a)).toBe(JSON.stringify(b));
        if (a._tag === 'Frame') expect(a.end).toBeLessThanOrEqual(bytes.length);
      }),
      { numRuns: 3000 },
    );
  });

  it('mutated real frames (flips, cuts, splices, random lengths) are rejected with a type, never accepted', () => {
    const mutation = fc.record({
      which: fc.integer({ min: 0, max: frames.length - 1 }),
      edits: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 }),
      cut: fc.option(fc.nat(), { nil: undefined }),
      tail: fc.uint8Array({ maxLength: 40 }),
    });
    fc.assert(
      fc.property(mutation, ({ which, edits, cut, tail }) => {
        const original = frames[which]!.bytes;
        let bytes = Uint8Array.from(original);
        let changed = false;
        for (const [position, value] of edits) {
          const at = position % bytes.length;
          if (bytes[at] !== value) changed = true;
          bytes[at] = value;
        }
        if (cut !== undefined) bytes = bytes.subarray(0, cut % bytes.length);
        const withTail = new Uint8Array(bytes.length + tail.length);
        withTail.set(bytes);
        withTail.set(tail, bytes.length);
        const a = decodeInNoise(withTail, 0x00);
        const b = decodeInNoise(withTail, 0xa5);
        expect(JSON.stringify(a)).toBe(JSON.stringify(b));
        if (changed || cut !== undefined) {
          // The only "frame" allowed is the unmodified original (an edit may rewrite a byte to itself).
          if (a._tag === 'Frame') expect(toHex(a.frame.bytes)).toBe(toHex(original));
          else expect(['Incomplete', 'Corrupt']).toContain(a._tag);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('random bodies behind a plausible prefix (right length, magic, version) reach every check and are rejected', () => {
    const plausible = fc
      .tuple(
        fc.integer({ min: MIN_FRAME_BYTES, max: 700 }),
        fc.uint8Array({ minLength: 700, maxLength: 700 }),
        fc.nat(),
      )
      .map(([length, noise, cut]) => {
        const bytes = Uint8Array.from(noise.subarray(0, length));
        new DataView(bytes.buffer).setUint32(0, length, true);
        bytes.set(FRAME_MAGIC, 4);
        bytes[8] = FRAME_VERSION;
        bytes[9]! &= 7; // known flags
        bytes[10] = 1 + (bytes[10]! % 6);
        bytes[11] = 1 + (bytes[11]! % 3);
        bytes[12]! %= 3;
        bytes[13] = 1 + (bytes[13]! % 40);
        if (cut % 2 === 0) {
          // Self-consistent lengths (no ids): decoding gets as far as the kind, trailer and hashes.
          bytes[9]! &= 4;
          new DataView(bytes.buffer).setBigUint64(14, BigInt(1 + (cut % 1000)), true);
          new DataView(bytes.buffer).setBigUint64(22, BigInt(cut), true);
          const payloadLength = length - FIXED_HEADER_BYTES - bytes[13]! - TRAILER_BYTES;
          if (payloadLength >= 0) {
            new DataView(bytes.buffer).setUint32(30, payloadLength, true);
            if (cut % 4 === 0) new DataView(bytes.buffer).setUint32(length - 4, length, true);
            if (cut % 8 === 0) bytes.fill(0x61, FIXED_HEADER_BYTES, FIXED_HEADER_BYTES + bytes[13]!);
          }
        }
        return bytes.subarray(0, cut % 3 === 0 ? cut % (length + 1) : length);
      });
    const seen = new Set<string>();
    fc.assert(
      fc.property(plausible, (bytes) => {
        const a = decodeInNoise(bytes, 0x00);
        const b = decodeInNoise(bytes, 0x5a);
        expect(JSON.stringify(a)).toBe(JSON.stringify(b));
        expect(a._tag).not.toBe('Frame');
        seen.add(a._tag === 'Corrupt' ? a.problem : a._tag);
      }),
      { numRuns: 4000 },
    );
    // The generator reaches past the prefix checks into the deeper ones.
    expect(seen.has('Incomplete')).toBe(true);
    for (const problem of ['length', 'trailer', 'kind', 'payload-hash']) expect(seen).toContain(problem);
  });

  it('decodes at any offset without throwing, including past the end', () => {
    const bytes = frames[0]!.bytes;
    for (const offset of [-1, 0, 1, bytes.length - 1, bytes.length, bytes.length + 10, Number.NaN]) {
      expect(() => decodeFrame(bytes, offset, nodeSha256)).not.toThrow();
    }
  });
});
