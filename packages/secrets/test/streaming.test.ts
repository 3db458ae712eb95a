import { Readable } from 'node:stream';
import { text as readAll } from 'node:stream/consumers';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RedactingStream, type Redactor } from '../src/index.js';
import { generateCredentialCorpus, type LabelledSample } from './fixtures/credential-corpus.js';
import { FakeTokens } from './fixtures/detector-corpus.js';
import { redactorWith } from './helpers.js';

const fake = new FakeTokens(404);
const SECRETS = {
  api: fake.password(32),
  db: fake.password(18),
  long: fake.mixed('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 120),
};
const VALUES = Object.values(SECRETS);

/** Every registered secret in every encoding must be gone; detector tokens too. */
function assertClean(out: string): void {
  for (const value of VALUES) {
    const bytes = Buffer.from(value);
    for (const form of [value, bytes.toString('base64'), bytes.toString('hex'), encodeURIComponent(value)]) {
      expect(out).not.toContain(form);
    }
  }
}

function streamed(redactor: Redactor, chunks: readonly string[], batchChars?: number): string {
  const incremental = redactor.createIncremental(batchChars === undefined ? {} : { batchChars });
  let out = '';
  for (const chunk of chunks) out += incremental.push(chunk);
  return out + incremental.end();
}

function sampleText(): string {
  const filler = (n: number): string => 'log line with ordinary words and numbers 12345\n'.repeat(n);
  const [api, db, long] = VALUES as [string, string, string];
  // The first secret sits past the hold-back (≈ 530 chars), so pushes before it already emit text.
  return [
    filler(14),
    `request failed: key=${api} status=401\n`,
    filler(3),
    `blob ${Buffer.concat([Buffer.from('zz'), Buffer.from(db), Buffer.from('qq')]).toString('base64')}\n`,
    `hex ${Buffer.from(long).toString('hex').toUpperCase()}\n`,
    `url ${encodeURIComponent(db)} and token ${fake.github()} and ${fake.jwt()}\n`,
    filler(2),
    `${fake.pem()}\n`,
    `password=${fake.password()} done ${long}`,
  ].join('');
}

describe('streaming redaction catches secrets split at any boundary', () => {
  const redactor = redactorWith(SECRETS);
  const text = sampleText();
  const oneShot = redactor.redactText(text);

  it('the one-shot reference is clean', () => {
    assertClean(oneShot);
    expect(oneShot).toContain('[REDACTED:github-token]');
    expect(oneShot).toContain('[REDACTED:private-key]');
  });

  it('every two-chunk split point, with eager and default batching', () => {
    for (let split = 0; split <= text.length; split++) {
      const chunks = [text.slice(0, split), text.slice(split)];
      expect(streamed(redactor, chunks, 1)).toBe(oneShot);
      expect(streamed(redactor, chunks)).toBe(oneShot);
    }
  });

  it('every pair of split points around each secret occurrence', () => {
    for (const value of [VALUES[0]!, VALUES[2]!]) {
      const at = text.indexOf(value);
      expect(at).toBeGreaterThan(0);
      for (let i = at - 2; i <= at + value.length + 2; i += 1) {
        for (let j = i; j <= at + value.length + 2; j += 3) {
          const chunks = [text.slice(0, i), text.slice(i, j), text.slice(j)];
          expect(streamed(redactor, chunks, 1)).toBe(oneShot);
        }
      }
    }
  });

  it('one character per chunk', () => {
    expect(streamed(redactor, [...text], 1)).toBe(oneShot);
    expect(streamed(redactor, [...text])).toBe(oneShot);
  });

  it('random splits and batch sizes (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: text.length }), { maxLength: 30 }),
        fc.option(fc.integer({ min: 1, max: 2000 }), { nil: undefined }),
        (cuts, batch) => {
          const points = [0, ...cuts.sort((a, b) => a - b), text.length];
          const chunks = points.slice(1).map((end, k) => text.slice(points[k], end));
          const out = streamed(redactor, chunks, batch);
          expect(out).toBe(oneShot);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('random texts built from secret fragments agree with the one-shot scan (fast-check)', () => {
    const pieces = [
      ...VALUES,
      ...VALUES.map((v) => v.slice(0, 7)),
      ...VALUES.map((v) => v.slice(-7)),
      Buffer.from(VALUES[1]!).toString('base64'),
      'password=',
      ' ',
      '\n',
      'ghp_',
      'xx',
    ];
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...pieces), { maxLength: 40 }),
        fc.array(fc.integer({ min: 1, max: 97 }), { minLength: 1, maxLength: 10 }),
        (parts, sizes) => {
          // Leading filler past the hold-back, so pushes emit before the interesting part.
          const input = 'plain words here\n'.repeat(40) + parts.join('');
          const chunks: string[] = [];
          for (let at = 0, k = 0; at < input.length; k++) {
            const size = sizes[k % sizes.length]!;
            chunks.push(input.slice(at, at + size));
            at += size;
          }
          const expected = redactor.redactText(input);
          expect(streamed(redactor, chunks, 1)).toBe(expected);
          assertClean(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('fails closed when a chain of overlapping matches exceeds the hold bound', () => {
    const periodic = redactorWith({ loop: 'abababababab' }, { detectors: [] });
    const incremental = periodic.createIncremental({ batchChars: 1, maxPendingChars: 500 });
    let out = '';
    for (let i = 0; i < 100; i++) out += incremental.push('ab'.repeat(20));
    out += incremental.push(' tail text');
    out += incremental.end();
    expect(out).toContain('[REDACTED:overflow]');
    expect(out).not.toContain('abababababab');
    expect(out.endsWith(' tail text')).toBe(true);
  });
});

describe('RedactingStream', () => {
  it('redacts a byte stream whose chunks split secrets and multi-byte characters', async () => {
    const redactor = redactorWith(SECRETS);
    const text = `héllo wörld ✓ ${VALUES[0]} 日本語 ${VALUES[1]} end`;
    const bytes = Buffer.from(text);
    const chunks: Buffer[] = [];
    for (let at = 0; at < bytes.length; at += 3) chunks.push(bytes.subarray(at, at + 3));
    const out = await readAll(Readable.from(chunks).pipe(new RedactingStream(redactor, { batchChars: 1 })));
    expect(out).toBe(redactor.redactText(text));
    expect(out).toContain('héllo wörld ✓ [REDACTED:api] 日本語 [REDACTED:db] end');
  });
});

describe('streaming with every detector format', () => {
  // One bare sample of every format from the independent corpus, so each detector's anchor,
  // look-behind and look-back sits near some split point.
  const corpus = generateCredentialCorpus(7, 1, 0);
  const perFormat = new Map<string, LabelledSample>();
  for (const sample of corpus)
    if (!perFormat.has(sample.kind) && sample.text.length < 400) perFormat.set(sample.kind, sample);
  const samples = [...perFormat.values()];
  const text = `${'ordinary log line\n'.repeat(40)}${samples.map((s) => s.text).join('\n')}\n`;
  const redactor = redactorWith(SECRETS);
  const oneShot = redactor.redactText(text);

  it('the one-shot reference removes every credential', () => {
    expect(samples.length).toBeGreaterThanOrEqual(40);
    for (const sample of samples) expect(oneShot, sample.kind).not.toContain(sample.secret!);
  });

  it('every two-chunk split point gives the one-shot output', { timeout: 600_000 }, () => {
    for (let split = 0; split <= text.length; split++) {
      const chunks = [text.slice(0, split), text.slice(split)];
      expect(streamed(redactor, chunks, 1), `split at ${split}`).toBe(oneShot);
    }
  });

  it('random splits and batch sizes (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: text.length }), { maxLength: 40 }),
        fc.option(fc.integer({ min: 1, max: 3000 }), { nil: undefined }),
        (cuts, batch) => {
          const points = [0, ...cuts.sort((a, b) => a - b), text.length];
          const chunks = points.slice(1).map((end, k) => text.slice(points[k], end));
          expect(streamed(redactor, chunks, batch)).toBe(oneShot);
        },
      ),
      { numRuns: 150 },
    );
  });
});
