import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DETECTOR_IDS, Redactor } from '../src/index.js';
import { scoreCorpus } from './fixtures/corpus-metrics.js';
import { CONTEXT_NAMES, FORMATS, generateCredentialCorpus, NEGATIVE_KINDS } from './fixtures/credential-corpus.js';

/** The thirteen detectors the redactor had before the catalog grew: the control. */
const ORIGINAL_DETECTORS = DETECTOR_IDS.filter((id) =>
  [
    'private-key',
    'aws-access-key-id',
    'aws-secret-access-key',
    'github-token',
    'anthropic-key',
    'openai-key',
    'google-api-key',
    'slack-token',
    'stripe-key',
    'jwt',
    'connection-string-password',
    'bearer-credential',
    'secret-assignment',
  ].includes(id),
);

describe('detectors on the independent credential corpus', () => {
  const corpus = generateCredentialCorpus();

  it('is independent of the detector patterns (the generator imports nothing from src/)', () => {
    const source = readFileSync(join(import.meta.dirname, 'fixtures', 'credential-corpus.ts'), 'utf8');
    expect(source).not.toMatch(/from ['"][./]*src\//);
    expect(CONTEXT_NAMES.length).toBeGreaterThanOrEqual(8);
    expect(FORMATS.length).toBeGreaterThanOrEqual(40);
    expect(NEGATIVE_KINDS).toEqual(
      expect.arrayContaining(['git-sha', 'sha256', 'uuid', 'npm-integrity', 'base64-image']),
    );
  });

  it('recall ≥ 0.95 and precision ≥ 0.95 with every detector; every format ≥ 0.9', () => {
    const score = scoreCorpus(new Redactor(), corpus);
    console.table(
      [...score.formats, ...score.negativeKinds].map((s) => ({
        kind: s.kind,
        samples: s.samples,
        recall: s.samples === s.stray && s.caught === 0 ? '-' : s.recall.toFixed(3),
        precision: s.precision.toFixed(3),
        stray: s.stray,
      })),
    );
    console.log(
      `credential corpus: ${score.positives} positives, ${score.negatives} negatives; recall ${score.recall.toFixed(3)}, precision ${score.precision.toFixed(3)}`,
    );
    expect(score.recall, score.misses.join('\n')).toBeGreaterThanOrEqual(0.95);
    expect(score.precision, score.strays.join('\n')).toBeGreaterThanOrEqual(0.95);
    for (const format of score.formats) expect(format.recall, format.kind).toBeGreaterThanOrEqual(0.9);
    for (const negative of score.negativeKinds) expect(negative.stray, negative.kind).toBe(0);
  });

  it('CONTROL: the original thirteen detectors miss what the catalog catches', () => {
    // Bare samples only: a name like GITLAB_TOKEN= lets the generic assignment detector catch anything.
    const bare = corpus.filter((s) => s.bare);
    const score = scoreCorpus(new Redactor({ detectors: ORIGINAL_DETECTORS }), bare);
    const full = scoreCorpus(new Redactor(), bare);
    console.log(
      `bare samples (${score.positives}): original detectors recall ${score.recall.toFixed(3)}, all detectors ${full.recall.toFixed(3)}`,
    );
    expect(full.recall).toBeGreaterThanOrEqual(0.95);
    expect(score.recall).toBeLessThan(0.8);
    const missed = score.formats.filter((f) => f.recall < 0.9).map((f) => f.kind);
    expect(missed).toEqual(expect.arrayContaining(['gitlab', 'npm', 'pypi', 'sendgrid', 'digitalocean', 'shopify']));
  });
});
