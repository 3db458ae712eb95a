import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { REDACTED, Redactor } from '../src/index.js';
import { DeltaRedactor } from '../src/redaction.js';

describe('Redactor', () => {
  it('redacts a key from error, retry and tool-call fields', () => {
    const key = 'sk-live-0123456789';
    const redactor = new Redactor([key]);
    expect(redactor.text(`bad key ${key}; again ${key}`)).toBe(`bad key ${REDACTED}; again ${REDACTED}`);
    const event = redactor.event({
      type: 'tool_call',
      id: 'c',
      name: 'run',
      arguments: { argv: ['curl', `-H${key}`] },
    });
    expect(JSON.stringify(event)).not.toContain(key);
    const error = redactor.event({ type: 'error', error: { _tag: 'network', provider: 'p', message: `at ${key}` } });
    expect(error).toEqual({ type: 'error', error: { _tag: 'network', provider: 'p', message: `at ${REDACTED}` } });
  });

  it('leaves short "keys" alone rather than mangling ordinary text', () => {
    expect(new Redactor(['abc']).text('abcdef')).toBe('abcdef');
  });

  it('streaming redaction equals whole-text redaction for every split of the text (property)', () => {
    // A two-letter alphabet and a self-overlapping key make partial matches the common case.
    const key = 'abaababa';
    const text = fc.string({ unit: fc.constantFrom('a', 'b', 'c'), maxLength: 60 });
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 10 }), (whole, cuts) => {
        const redactor = new Redactor([key]);
        const stream = new DeltaRedactor(redactor, [key]);
        const points = [...new Set(cuts.map((cut) => cut % (whole.length + 1)))].sort((a, b) => a - b);
        let start = 0;
        let out = '';
        for (const point of [...points, whole.length]) {
          out += stream.push(whole.slice(start, point));
          start = point;
        }
        out += stream.flush();
        expect(out).toBe(redactor.text(whole));
        expect(out).not.toContain(key);
      }),
      { numRuns: 500 },
    );
  });
});
