/** Context selection stays inside its budget; failure memories come out of a task's ledger frames. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { failureMemoriesOfTask, type Memory, type RankedMemory, selectContext } from '../src/index.js';

const NOW = Date.UTC(2026, 5, 1);
const DAY = 86_400_000;

const ranked = (id: string, kind: Memory['kind'], body: string, fix: string | null = null): RankedMemory => ({
  memory: {
    id,
    repoId: 'r',
    kind,
    body,
    fix,
    tags: [],
    source: kind === 'failure' ? 'verifier' : 'person',
    taskId: null,
    createdAtMs: NOW - 3 * DAY,
  },
  score: 0.03,
  semantic: 0.5,
  lexical: null,
});

describe('selectContext', () => {
  it('never exceeds its byte budget, whatever it is given', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.constantFrom('failure', 'nugget', 'decision') as fc.Arbitrary<Memory['kind']>,
            fc.string({ maxLength: 900 }),
          ),
          { maxLength: 30 },
        ),
        fc.string({ maxLength: 3_000 }),
        fc.array(
          fc.record({ path: fc.string({ minLength: 1, maxLength: 80 }), symbol: fc.string({ maxLength: 40 }) }),
          { maxLength: 40 },
        ),
        fc.integer({ min: 0, max: 8_000 }),
        (memories, summary, related, maxBytes) => {
          const bundle = selectContext({
            memories: memories.map(([kind, body], i) => ranked(`m_${i}`, kind, body === '' ? 'x' : body)),
            capsule: { summary, related },
            nowMs: NOW,
            budget: { maxBytes },
          });
          const total = bundle.observations.reduce((sum, o) => sum + Buffer.byteLength(o.text, 'utf8') + 1, 0);
          expect(total).toBeLessThanOrEqual(maxBytes + bundle.observations.length);
          expect(bundle.bytes).toBeLessThanOrEqual(maxBytes);
        },
      ),
    );
  });

  it('orders capsule summary, notes, failures with their fixes, then related code, and counts what it drops', () => {
    const bundle = selectContext({
      capsule: {
        summary: 'stack: node, vitest\ntest: npm test',
        related: [{ path: 'src/a.ts', line: 12, symbol: 'parseA', kind: 'function' }],
      },
      memories: [
        ranked('m_1', 'nugget', 'use ESM'),
        ranked('m_2', 'failure', 'assertion: add() returned -1', 'fixed the sign in add'),
      ],
      nowMs: NOW,
    });
    expect(bundle.observations.map((o) => o.source)).toEqual([
      'repository capsule',
      'repository memory: nuggets, conventions and decisions',
      'repository memory: past failures and their fixes',
      'repository capsule: code related to the goal',
    ]);
    expect(bundle.observations[1]?.text).toBe('- [nugget m_1, 3 days old, from a person] use ESM');
    expect(bundle.observations[2]?.text).toContain('verified fix: fixed the sign in add');
    expect(bundle.observations[3]?.text).toBe('- src/a.ts:12 function parseA');
    const tight = selectContext({
      memories: [ranked('m_1', 'nugget', 'x'.repeat(500)), ranked('m_2', 'nugget', 'short')],
      nowMs: NOW,
      budget: { maxBytes: 200 },
    });
    expect(tight.dropped).toBe(1);
    expect(tight.observations[0]?.text).toContain('short');
  });
});

describe('failure memories from a ledger', () => {
  const frames = [
    { kind: 'TaskCreated', taskId: 't_a', payload: { goal: 'fix add()' } },
    {
      kind: 'verify.diagnosis',
      taskId: 't_a',
      payload: {
        kind: 'assertion',
        summary: 'expected 5, received -1',
        failingTests: ['adds'],
        firstErrorLocation: { file: 'test/math.test.js', line: 6 },
      },
    },
    {
      kind: 'verify.diagnosis',
      taskId: 't_a',
      payload: { kind: 'assertion', summary: 'expected 5, received -1', failingTests: ['adds'] },
    },
    { kind: 'verify.diagnosis', taskId: 't_a', payload: { summary: 'no kind: not a diagnosis this code knows' } },
    { kind: 'verify.diagnosis', taskId: 't_b', payload: { kind: 'timeout', summary: 'another task' } },
    {
      kind: 'backend.result',
      taskId: 't_a',
      payload: { attempt: 2, summary: 'changed a - b to a + b in src/math.js' },
    },
    { kind: 'PatchVerified', taskId: 't_a', payload: { patchHash: 'ab'.repeat(32), argv: ['npm', 'test'] } },
  ];

  it('one memory per distinct failure of the task, with the verified fix', () => {
    const memories = failureMemoriesOfTask(frames, 't_a');
    expect(memories).toHaveLength(1);
    expect(memories[0]?.body).toBe(
      'assertion: expected 5, received -1 at test/math.test.js:6 (failing: adds) — while working on: fix add()',
    );
    expect(memories[0]?.fix).toBe('changed a - b to a + b in src/math.js (patch abababababab, verified by: npm test)');
    expect(memories[0]?.source).toBe('verifier');
    expect(memories[0]?.taskId).toBe('t_a');
  });

  it('a failure without a verified patch has no fix', () => {
    const memories = failureMemoriesOfTask(frames, 't_b');
    expect(memories.map((m) => [m.body, m.fix])).toEqual([['timeout: another task', null]]);
  });
});
