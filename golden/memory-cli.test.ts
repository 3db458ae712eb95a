/**
 * `crustcore memory add|list|forget` end to end on the built CLI: a fresh
 * repository, a private CRUSTCORE_HOME, and the embedded store (PGlite with
 * pgvector) under it. Each command is its own process, so what one writes
 * the next reads back from disk.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCli, crustcore, makeRepo, NODE_REPO } from './cli-harness.js';

beforeAll(() => buildCli(), 300_000);

interface MemoryJson {
  readonly id: string;
  readonly kind: string;
  readonly body: string;
  readonly tags: readonly string[];
  readonly source: string;
}

describe('crustcore memory', () => {
  it('adds, lists, forgets, and refuses an unknown id with exit 2', { timeout: 900_000 }, () => {
    const box = makeRepo({ 'README.md': '# memory\n' });
    const first = crustcore(box, ['memory', 'add', '--tag', 'esm', 'Use', 'ESM', 'imports', 'in', 'this', 'package']);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^remembered m_[0-9a-f]{16}$/m);
    // The store lives in the project directory of this repository.
    expect(existsSync(join(box.home, 'projects'))).toBe(true);

    const second = crustcore(box, ['memory', 'add', '--kind', 'convention', '--json', 'Tests live next to the code']);
    expect(second.status, second.stderr).toBe(0);
    expect(second.json?.created).toBe(true);
    const conventionId = ((second.json?.memory ?? {}) as MemoryJson).id;

    const listed = crustcore(box, ['memory', 'list', '--json', '--dir', box.repo]);
    expect(listed.status, listed.stderr).toBe(0);
    const memories = (listed.json?.memories ?? []) as MemoryJson[];
    expect(memories.map((m) => m.kind).sort()).toEqual(['convention', 'nugget']);
    const nugget = memories.find((m) => m.kind === 'nugget');
    expect(nugget?.body).toBe('Use ESM imports in this package');
    expect(nugget?.tags).toEqual(['esm']);
    expect(nugget?.source).toBe('person');

    const forgotten = crustcore(box, ['memory', 'forget', conventionId]);
    expect(forgotten.status, forgotten.stderr).toBe(0);
    expect(forgotten.stdout).toContain(`forgot ${conventionId}`);
    const after = crustcore(box, ['memory', 'list', '--json']);
    expect(((after.json?.memories ?? []) as MemoryJson[]).map((m) => m.id)).toEqual([nugget?.id]);

    const again = crustcore(box, ['memory', 'forget', conventionId]);
    expect(again.status).toBe(2);
    expect(again.stderr).toContain(`no memory ${conventionId}`);
  });

  it('answers bad command lines with exit 2 before opening any store', () => {
    const box = makeRepo({ 'README.md': '# memory\n' });
    const cases: [readonly string[], RegExp][] = [
      [['memory', 'add'], /add needs the TEXT/],
      [['memory', 'drop'], /expected add, list, forget, search, learn, context/],
      [['memory', 'add', '--kind', 'rumour', 'x'], /--kind: expected one of/],
      [['memory', 'add', '--kind', 'failure', 'x'], /failure memories come from the verifier/],
      [['memory', 'list', '--dir', box.root], /not a git repository/],
    ];
    for (const [args, message] of cases) {
      const run = crustcore(box, args);
      expect(run.status, args.join(' ')).toBe(2);
      expect(run.stderr).toMatch(message);
    }
    expect(existsSync(join(box.home, 'projects'))).toBe(false);
  });
});

describe('crustcore memory learn', () => {
  it("learns a real task's failure and its verified fix from the ledger `crustcore run` wrote", {
    timeout: 900_000,
  }, () => {
    const box = makeRepo(NODE_REPO);
    // A worker that breaks add() another way on attempt 1 and fixes it on attempt 2.
    const worker = join(box.root, 'fail-once.mjs');
    writeFileSync(
      worker,
      [
        "import { readFileSync, writeFileSync } from 'node:fs';",
        "const input = JSON.parse(readFileSync(0, 'utf8'));",
        'const wrong = input.attempt === 1;',
        "const src = readFileSync('src/math.js', 'utf8');",
        "writeFileSync('src/math.js', src.replace(/return a . b;/, wrong ? 'return a * b;' : 'return a + b;'));",
        "process.stdout.write(JSON.stringify({ summary: wrong ? 'multiplied' : 'add() now adds', done: true, commands_run: [], risks: [] }));",
      ].join('\n'),
    );
    const run = crustcore(box, [
      'run',
      '--goal',
      'fix add',
      '--worker',
      `node ${worker}`,
      '--approve',
      'auto',
      '--json',
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.json?.outcome).toBe('completed');

    const learned = crustcore(box, ['memory', 'learn', '--json']);
    expect(learned.status, learned.stderr).toBe(0);
    expect(learned.json).toMatchObject({ ok: true, tasks: 1 });
    expect(learned.json?.added).toBeGreaterThanOrEqual(1);
    const listed = crustcore(box, ['memory', 'list', '--kind', 'failure', '--json']);
    expect(listed.status, listed.stderr).toBe(0);
    const failures = (listed.json?.memories ?? []) as (MemoryJson & { fix: string | null })[];
    expect(failures.length).toBeGreaterThanOrEqual(1);
    expect(failures.every((m) => m.source === 'verifier')).toBe(true);
    expect(failures.map((m) => m.fix ?? '').join('\n')).toContain('add() now adds');
  });
});
