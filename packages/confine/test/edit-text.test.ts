import { chmodSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { editText, lineSimilarity, locateEdit, MAX_DRIFT_LINES, resolveWritePath } from '../src/index.js';
import { left, makeSandbox, right } from './fixtures.js';

const numbered = (count: number): string => Array.from({ length: count }, (_, index) => `line ${index + 1}\n`).join('');

describe('locateEdit', () => {
  it('finds the text starting in the range', () => {
    const text = numbered(20);
    expect(right(locateEdit(text, { oldText: 'line 5\nline 6', newText: 'x', startLine: 5 }))).toMatchObject({
      line: 5,
      driftLines: 0,
    });
    expect(right(locateEdit(text, { oldText: 'ne 7', newText: 'x', startLine: 6, endLine: 8 })).line).toBe(7);
  });

  it('recovers from drift up to the limit in both directions and reports it', () => {
    const text = numbered(60);
    expect(right(locateEdit(text, { oldText: 'line 40\n', newText: 'x', startLine: 30 })).driftLines).toBe(10);
    expect(right(locateEdit(text, { oldText: 'line 20\n', newText: 'x', startLine: 30 })).driftLines).toBe(-10);
    expect(right(locateEdit(text, { oldText: 'line 45\n', newText: 'x', startLine: 30, endLine: 35 })).driftLines).toBe(
      10,
    );
  });

  it('refuses drift beyond the limit with a diagnosis naming where the text is', () => {
    const text = numbered(60);
    const mismatch = left(locateEdit(text, { oldText: 'line 41\n', newText: 'x', startLine: 30 }));
    expect(mismatch._tag).toBe('EditMismatch');
    if (mismatch._tag !== 'EditMismatch') return;
    expect(mismatch.diagnosis.foundAtLines).toEqual([41]);
    expect(mismatch.message).toContain('line 41');
  });

  it('diagnoses a near miss with the closest line and a diff-like hint', () => {
    const text = 'function add(a, b) {\n  return a + b;\n}\n';
    const mismatch = left(
      locateEdit(text, { oldText: 'function add(a, c) {\n  return a + c;\n', newText: 'x', startLine: 1 }),
    );
    if (mismatch._tag !== 'EditMismatch') throw new Error(mismatch._tag);
    expect(mismatch.diagnosis.closestLine).toBe(1);
    expect(mismatch.diagnosis.closestText).toBe('function add(a, b) {');
    expect(mismatch.diagnosis.similarity).toBeGreaterThan(0.7);
    expect(mismatch.diagnosis.hint).toContain('- function add(a, c) {');
    expect(mismatch.diagnosis.hint).toContain('+ function add(a, b) {');
    expect(mismatch.diagnosis.hint).toContain('+   return a + b;');
  });

  it('refuses ambiguous matches', () => {
    const text = 'x = 1\ny = 2\nx = 1\n';
    const inRange = left(locateEdit(text, { oldText: 'x = 1', newText: 'x = 3', startLine: 1, endLine: 3 }));
    expect(inRange).toMatchObject({ _tag: 'AmbiguousEdit', lines: [1, 3] });
    const nearby = left(locateEdit(`a\n${text}`, { oldText: 'x = 1', newText: 'x = 3', startLine: 1 }));
    expect(nearby).toMatchObject({ _tag: 'AmbiguousEdit', lines: [2, 4] });
    // One in range wins over others nearby.
    expect(right(locateEdit(text, { oldText: 'x = 1', newText: 'x = 3', startLine: 3 })).line).toBe(3);
  });

  it('refuses empty or no-op edits and bad ranges', () => {
    expect(left(locateEdit('a', { oldText: '', newText: 'b', startLine: 1 }))._tag).toBe('InvalidEdit');
    expect(left(locateEdit('a', { oldText: 'a', newText: 'a', startLine: 1 }))._tag).toBe('InvalidEdit');
    expect(left(locateEdit('a', { oldText: 'a', newText: 'b', startLine: 0 }))._tag).toBe('InvalidEdit');
    expect(left(locateEdit('a', { oldText: 'a', newText: 'b', startLine: 3, endLine: 2 }))._tag).toBe('InvalidEdit');
  });

  it('scores similarity between 0 and 1', () => {
    expect(lineSimilarity('abc', 'abc')).toBe(1);
    expect(lineSimilarity('  abc', 'abc  ')).toBe(1);
    expect(lineSimilarity('abcdef', 'uvwxyz')).toBe(0);
  });
});

describe('property: drift recovery', () => {
  it(`finds text moved by ≤${MAX_DRIFT_LINES} lines and refuses text moved further`, () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 20, max: 80 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: -25, max: 25 }),
        fc.integer({ min: 0, max: 1_000_000 }),
        (lineCount, blockLength, drift, seed) => {
          // Unique lines so the block occurs exactly once.
          const lines = Array.from({ length: lineCount }, (_, index) => `row ${seed}-${index}`);
          const start = 30; // 1-based line where the caller believes the block starts
          const block = Array.from({ length: blockLength }, (_, index) => `target ${seed}-${index}`);
          const actualStart = start + drift;
          fc.pre(actualStart >= 1 && actualStart <= lines.length + 1);
          lines.splice(actualStart - 1, 0, ...block);
          const text = `${lines.join('\n')}\n`;
          const located = locateEdit(text, {
            oldText: `${block.join('\n')}\n`,
            newText: 'replaced\n',
            startLine: start,
          });
          if (Math.abs(drift) <= MAX_DRIFT_LINES) {
            expect(located._tag).toBe('Right');
            if (located._tag === 'Right') {
              expect(located.right.line).toBe(actualStart);
              expect(located.right.driftLines).toBe(drift);
            }
          } else {
            expect(located._tag).toBe('Left');
            if (located._tag === 'Left') expect(located.left._tag).toBe('EditMismatch');
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('editText', () => {
  it('replaces exactly one occurrence, keeps the mode, and reports drift', () => {
    const box = makeSandbox();
    box.put('tool.sh', `#!/bin/sh\n${numbered(30)}`);
    chmodSync(join(box.rootPath, 'tool.sh'), 0o755);
    const path = right(resolveWritePath(box.write, 'tool.sh'));
    const outcome = right(editText(box.write, path, { oldText: 'line 12\n', newText: 'LINE TWELVE\n', startLine: 8 }));
    expect(outcome).toMatchObject({ line: 13, driftLines: 5 });
    const content = readFileSync(join(box.rootPath, 'tool.sh'), 'utf8');
    expect(content).toContain('line 11\nLINE TWELVE\nline 13\n');
    expect(statSync(join(box.rootPath, 'tool.sh')).mode & 0o777).toBe(0o755);
  });

  it('leaves the file untouched on mismatch and carries the path in the error', () => {
    const box = makeSandbox();
    box.put('f.txt', numbered(5));
    const path = right(resolveWritePath(box.write, 'f.txt'));
    const error = left(editText(box.write, path, { oldText: 'line 9', newText: 'x', startLine: 1 }));
    expect(error).toMatchObject({ _tag: 'EditMismatch', path: 'f.txt' });
    expect(readFileSync(join(box.rootPath, 'f.txt'), 'utf8')).toBe(numbered(5));
  });

  it('refuses binary files and missing files', () => {
    const box = makeSandbox();
    box.put('bin', 'a\u0000b');
    expect(
      left(editText(box.write, right(resolveWritePath(box.write, 'bin')), { oldText: 'a', newText: 'b', startLine: 1 }))
        ._tag,
    ).toBe('BinaryFile');
    expect(
      left(
        editText(box.write, right(resolveWritePath(box.write, 'nope')), { oldText: 'a', newText: 'b', startLine: 1 }),
      )._tag,
    ).toBe('NotFound');
  });
});
