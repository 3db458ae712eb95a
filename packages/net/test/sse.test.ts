import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type SseMessage, SseParser } from '../src/index.js';

const encoder = new TextEncoder();

function parseChunks(chunks: readonly Uint8Array[]): SseMessage[] {
  const parser = new SseParser();
  const out: SseMessage[] = [];
  for (const chunk of chunks) out.push(...parser.push(chunk));
  out.push(...parser.end());
  return out;
}

/** Splits bytes at the given cut points (any byte offset: inside UTF-8 sequences and CRLF pairs too). */
function chunked(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let start = 0;
  for (const point of points) {
    out.push(bytes.subarray(start, point));
    start = point;
  }
  out.push(bytes.subarray(start));
  return out;
}

const lineEnding = fc.constantFrom('\n', '\r\n', '\r');
const fieldText = fc.string({ unit: 'grapheme', maxLength: 20 }).map((text) => text.replace(/[\r\n]/g, ' '));
const eventArbitrary = fc.record({
  event: fc.option(fc.constantFrom('message_start', 'content_block_delta', 'response.output_text.delta', 'ping'), {
    nil: undefined,
  }),
  dataLines: fc.array(fieldText, { minLength: 1, maxLength: 3 }),
  comment: fc.boolean(),
  eol: lineEnding,
});

describe('SseParser', () => {
  it('parses events, multi-line data, comments, and all three line endings', () => {
    const text =
      ': keep-alive\r\nevent: a\r\ndata: one\r\ndata:two\r\n\r\n' +
      'data: {"x":1}\n\n' +
      'event: b\rdata: é😀\r\r' +
      'id: 7\nretry: 10\n\n';
    expect(parseChunks([encoder.encode(text)])).toEqual([
      { event: 'a', data: 'one\ntwo' },
      { event: 'message', data: '{"x":1}' },
      { event: 'b', data: 'é😀' },
    ]);
  });

  it('drops an event not closed by a blank line at end of input (a cut-off stream)', () => {
    expect(parseChunks([encoder.encode('data: complete\n\ndata: partial\n')])).toEqual([
      { event: 'message', data: 'complete' },
    ]);
  });

  it('dispatches `data:` with an empty value, but not an event with no data field', () => {
    expect(parseChunks([encoder.encode('data:\n\nevent: x\n\n')])).toEqual([{ event: 'message', data: '' }]);
  });

  it('flags an event larger than its bound instead of buffering without limit', () => {
    const parser = new SseParser({ maxEventLength: 64 });
    parser.push(encoder.encode(`data: ${'x'.repeat(40)}\n`));
    expect(parser.overflowed).toBe(false);
    parser.push(encoder.encode(`data: ${'y'.repeat(40)}`));
    expect(parser.overflowed).toBe(true);
    expect(parser.push(encoder.encode('\n\n'))).toEqual([]);
  });

  it('yields identical events for every chunking of a valid stream (property)', () => {
    fc.assert(
      fc.property(
        fc.array(eventArbitrary, { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (events, cuts) => {
          const text = events
            .map(({ event, dataLines, comment, eol }) => {
              const lines = [
                ...(comment ? [': ping'] : []),
                ...(event === undefined ? [] : [`event: ${event}`]),
                ...dataLines.map((line) => `data: ${line}`),
              ];
              return lines.join(eol) + eol + eol;
            })
            .join('');
          const bytes = encoder.encode(text);
          const whole = parseChunks([bytes]);
          expect(whole).toEqual(
            events.map(({ event, dataLines }) => ({ event: event ?? 'message', data: dataLines.join('\n') })),
          );
          expect(parseChunks(chunked(bytes, cuts))).toEqual(whole);
          // Byte-at-a-time is the most adversarial chunking of all.
          expect(parseChunks(Array.from(bytes, (byte) => Uint8Array.of(byte)))).toEqual(whole);
        },
      ),
      { numRuns: 300 },
    );
  });
});
