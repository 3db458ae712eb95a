import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  characterClassCount,
  DETECTOR_IDS,
  DETECTORS,
  type DetectorId,
  looksLikePlaceholder,
  Redactor,
  shannonEntropy,
} from '../src/index.js';
import { FakeTokens, generateDetectorCorpus } from './fixtures/detector-corpus.js';

interface Tally {
  truePositive: number;
  falseNegative: number;
  labelled: number;
}

describe('detectors on the labelled corpus', () => {
  const corpus = generateDetectorCorpus();

  it('the corpus is the pinned, deterministic one', () => {
    const pinned = readFileSync(join(import.meta.dirname, 'fixtures', 'detector-corpus.sha256'), 'utf8').split(' ')[0];
    expect(createHash('sha256').update(JSON.stringify(corpus)).digest('hex')).toBe(pinned);
    // This corpus covers the first thirteen detectors; credential-corpus.test.ts covers every format.
    const covered = new Set(corpus.filter((s) => s.detector !== null).map((s) => s.detector));
    expect(covered.size).toBe(13);
    for (const id of covered) expect(DETECTOR_IDS).toContain(id);
  });

  it('recall ≥ 0.9 and precision ≥ 0.8, overall and per detector', () => {
    const redactor = new Redactor();
    const covered = [...new Set(corpus.flatMap((s) => (s.detector === null ? [] : [s.detector])))];
    const perDetector = new Map<DetectorId, Tally>(
      covered.map((id) => [id, { truePositive: 0, falseNegative: 0, labelled: 0 }]),
    );
    let truePositive = 0;
    let falseNegative = 0;
    let falsePositive = 0;
    const falsePositives: string[] = [];
    for (const sample of corpus) {
      const report = redactor.report(sample.text);
      if (sample.secret === null || sample.detector === null) {
        if (report.findings.length > 0) {
          falsePositive++;
          falsePositives.push(`${report.findings.map((f) => f.label).join(',')}: ${sample.text.slice(0, 60)}`);
        }
        continue;
      }
      const tally = perDetector.get(sample.detector)!;
      // Caught means: the credential is gone from the output, not merely that something was found.
      const caught = report.findings.length > 0 && !report.text.includes(sample.secret);
      if (caught) {
        truePositive++;
        tally.truePositive++;
      } else {
        falseNegative++;
        tally.falseNegative++;
      }
      if (report.findings.some((f) => f.label === sample.detector)) tally.labelled++;
    }
    const recall = truePositive / (truePositive + falseNegative);
    const precision = truePositive / (truePositive + falsePositive);
    const rows = [...perDetector].map(([id, t]) => ({
      detector: id,
      recall: (t.truePositive / (t.truePositive + t.falseNegative)).toFixed(3),
      'own label': `${t.labelled}/${t.truePositive + t.falseNegative}`,
    }));
    console.table(rows);
    console.log(
      `detector corpus: ${corpus.length} samples, recall ${recall.toFixed(3)}, precision ${precision.toFixed(3)}` +
        ` (TP ${truePositive}, FN ${falseNegative}, FP ${falsePositive})`,
    );
    expect(falsePositives).toEqual([]);
    expect(recall).toBeGreaterThanOrEqual(0.9);
    expect(precision).toBeGreaterThanOrEqual(0.8);
    for (const [id, t] of perDetector) {
      expect(t.truePositive / (t.truePositive + t.falseNegative), id).toBeGreaterThanOrEqual(0.9);
    }
  });
});

describe('detector details', () => {
  const detect = (text: string): readonly string[] => new Redactor().report(text).findings.map((f) => f.label);

  it('redacts the value and keeps the name that introduced it', () => {
    const value = new FakeTokens(1).password();
    expect(new Redactor().redactText(`DB_PASSWORD=${value}`)).toBe('DB_PASSWORD=[REDACTED:secret-assignment]');
    expect(new Redactor().redactText(`postgres://app:${value}@db/x`)).toBe(
      'postgres://app:[REDACTED:connection-string-password]@db/x',
    );
  });

  it('an unterminated private key block is redacted to the bound (fail closed)', () => {
    const body = new FakeTokens(2).bytes(300).toString('base64');
    const out = new Redactor().redactText(`-----BEGIN RSA PRIVATE KEY-----\n${body}`);
    expect(out).toBe('[REDACTED:private-key]');
  });

  it('placeholders, code references and low-entropy values are not secrets', () => {
    for (const text of [
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell placeholder, literally.
      'password=${PASSWORD}',
      'api_key=<your key>',
      'token={{ secrets.TOKEN }}',
      'password=xxxxxxxxxxxx',
      'secret=process.env.API_SECRET',
      'password=aaaaaaaaaaaa',
    ]) {
      expect(detect(text), text).toEqual([]);
    }
    expect(looksLikePlaceholder('YOUR_TOKEN_HERE')).toBe(true);
    expect(shannonEntropy('aaaa')).toBe(0);
    expect(shannonEntropy('abcd')).toBe(2);
    expect(characterClassCount('aB3-')).toBe(4);
  });

  it('every detector declares a bound that its own matches respect', () => {
    const fake = new FakeTokens(3);
    const samples = generateDetectorCorpus(99, 8);
    for (const detector of DETECTORS) {
      const regex = new RegExp(detector.source, detector.flags);
      for (const sample of samples) {
        for (const match of sample.text.matchAll(regex)) {
          expect(match[0].length, detector.id).toBeLessThanOrEqual(detector.maxMatchLength);
          if (detector.trigger !== null) expect(match[0].startsWith(detector.trigger), detector.id).toBe(true);
        }
      }
    }
    // An over-long token is still redacted up to the bound rather than skipped.
    const long = `s${'k'}-${fake.mixed('abcXYZ0123456789', 400)}`;
    expect(new Redactor().redactText(long).startsWith('[REDACTED:openai-key]')).toBe(true);
  });
});
