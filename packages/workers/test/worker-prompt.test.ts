import type { Diagnosis } from '@crustcore/verify';
import { describe, expect, it } from 'vitest';
import { workerPrompt } from '../src/index.js';
import { workerInput } from './worker-harness.js';

const diagnosis: Diagnosis = {
  kind: 'assertion',
  environmentCause: null,
  summary: 'sum: expected 3, received -1',
  remediation: 'Fix the implementation, not the test.',
  failingTests: ['sum adds'],
  firstErrorLocation: null,
  expected: '3',
  received: '-1',
  exitCode: 1,
  timedOut: false,
  counts: null,
  excerpt: 'AssertionError',
};

describe('workerPrompt', () => {
  it('states the input contract: goal, roots, forbidden paths, no network or secrets, limits', () => {
    const prompt = workerPrompt(
      workerInput('t1', {
        goal: 'Make add() add.',
        allowedRoots: ['src'],
        forbiddenPaths: ['secrets'],
        maxSeconds: 600,
        maxOutputBytes: 1024,
      }),
      '/work/tree',
    );
    expect(prompt).toContain('Make add() add.');
    expect(prompt).toContain('  - /work/tree/src');
    expect(prompt).toContain('  - /work/tree/secrets');
    expect(prompt).toContain('~/.ssh');
    expect(prompt).toContain('no network');
    expect(prompt).toContain('Time limit: 600 seconds. Output limit: 1024 bytes.');
    expect(prompt).toContain('"secrets":"none"');
    expect(prompt).toContain('"network":"deny"');
    expect(prompt).not.toContain('previous attempt');
  });

  it('puts the previous diagnosis into a retry', () => {
    const prompt = workerPrompt(workerInput('t1', { attempt: 3, previousDiagnosis: diagnosis }), '/w');
    expect(prompt).toContain('Attempt 3: the previous attempt failed verification');
    expect(prompt).toContain('sum: expected 3, received -1');
    expect(prompt).toContain('"previous_diagnosis":{"kind":"assertion"');
  });
});
