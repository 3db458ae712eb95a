/**
 * The capsule for a goal, on a real index of a generated repository: the
 * summary says counts and commands, the related list puts the symbols whose
 * names share the goal's words first, and the order is deterministic.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildIndex, capsuleForGoal, goalWords, type RepoCapsule } from '../src/index.js';
import { type Fixture, makeRepo } from './fixture.js';

let fixture: Fixture | null = null;
afterEach(() => {
  fixture?.cleanup();
  fixture = null;
});

async function capsuleOf(files: Readonly<Record<string, string>>): Promise<RepoCapsule> {
  fixture = makeRepo(files);
  const state = fixture.stateDir;
  const built = await buildIndex({ dir: fixture.repoDir, cacheDirFor: () => join(state, 'index') });
  if (built._tag === 'Left') throw new Error(built.left.message);
  return built.right.capsule;
}

const FILES = {
  'package.json': '{ "name": "g", "scripts": { "test": "vitest run" }, "devDependencies": { "vitest": "4" } }\n',
  'src/journal.ts': 'export function flushJournal() {}\nexport function openJournal() {}\nfunction unrelated() {}\n',
  'src/cache.ts': 'export class LruCache {}\nexport const cacheSize = 3;\n',
  'src/journal-flush.ts': 'const x = 1;\n',
  'test/journal.test.ts': "import { flushJournal } from '../src/journal.js';\nfunction flushesTwice() {}\n",
  'README.md': '# journal flush\n',
};

describe('capsuleForGoal', () => {
  it('puts the symbols named by the goal first, then files whose paths match', async () => {
    const capsule = await capsuleOf(FILES);
    const goal = capsuleForGoal(capsule, 'the journal flush loses writes');
    expect(goal.related[0]).toEqual({ path: 'src/journal.ts', line: 1, symbol: 'flushJournal', kind: 'function' });
    const paths = goal.related.map((r) => r.path);
    expect(paths).toContain('src/journal-flush.ts');
    expect(paths).not.toContain('README.md');
    expect(paths).not.toContain('src/cache.ts');
    expect(goal.related.some((r) => r.symbol === 'unrelated')).toBe(false);
    expect(goal.summary).toMatch(/^files: 6 \(/);
    expect(goal.summary).toContain('stack: node (vitest)');
    expect(goal.summary).toContain('test: npm test');
  });

  it('is deterministic, bounded, and empty for a goal that names nothing', async () => {
    const capsule = await capsuleOf(FILES);
    const a = capsuleForGoal(capsule, 'LRU cache size');
    expect(capsuleForGoal(capsule, 'LRU cache size')).toEqual(a);
    expect(a.related.map((r) => r.symbol)).toEqual(['LruCache', 'cacheSize']); // equal scores: by line
    expect(capsuleForGoal(capsule, 'journal', 1).related).toHaveLength(1);
    expect(capsuleForGoal(capsule, 'zebra quantum').related).toEqual([]);
  });

  it('splits identifiers and paths into words, drops short and common ones', () => {
    expect(goalWords('Fix resolveWorkspaceAlias in src/HTTPServer_config.ts')).toEqual([
      'resolve',
      'workspace',
      'alia',
      'src',
      'http',
      'server',
      'config',
    ]);
  });
});
