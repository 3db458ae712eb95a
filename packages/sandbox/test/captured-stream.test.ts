import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StreamCapture } from '../src/runner/captured-stream.js';

describe('StreamCapture', () => {
  it('keeps everything within the budget, else exactly head and tail with a marker', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 20 }),
        fc.integer({ min: 0, max: 200 }),
        (chunks, budget) => {
          const capture = new StreamCapture(budget);
          for (const chunk of chunks) capture.push(Buffer.from(chunk));
          const all = Buffer.concat(chunks.map((chunk) => Buffer.from(chunk)));
          const result = capture.finish();
          expect(result.totalBytes).toBe(all.length);
          expect(result.sha256).toBe(createHash('sha256').update(all).digest('hex'));
          expect(result.truncated).toBe(all.length > budget);
          const headBytes = Math.ceil(budget / 2);
          const tailBytes = budget - headBytes;
          const expected = result.truncated
            ? `${all.subarray(0, headBytes).toString('utf8')}\n…[crustcore: ${all.length - budget} bytes dropped]…\n${all.subarray(all.length - tailBytes).toString('utf8')}`
            : all.toString('utf8');
          expect(result.text).toBe(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a zero budget keeps nothing but still counts and hashes', () => {
    const capture = new StreamCapture(0);
    capture.push(Buffer.from('abc'));
    const result = capture.finish();
    expect(result).toMatchObject({ totalBytes: 3, truncated: true });
    expect(result.text).toBe('\n…[crustcore: 3 bytes dropped]…\n');
  });
});
