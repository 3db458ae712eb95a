/**
 * `xtask tidy` (xtask/tidy.ts) must fire: each rule is tried on a planted
 * offender in a throwaway repository, next to a clean control that passes, so
 * the check cannot pass vacuously. The last test runs it on this repository.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { longFunctionsIn, RATCHET_FILE, tidyProblems } from '../xtask/tidy.js';

const REPO = join(import.meta.dirname, '..');
const SIZE_LIMIT = JSON.stringify([{ name: 'core', path: 'dist/x.js', limit: '7 kB', gzip: true }]);
const DOC_OK =
  '| artifact | measured | gate |\n| --- | --- | --- |\n| core | 6.5 kB | 7 kB |\n\nThe core stays ≤ 7 kB.\n';

/** A function of `body` statements, so `body + 3` lines long. */
const fn = (name: string, body: number): string =>
  `export function ${name}(): number {\n${Array.from({ length: body }, (_, i) => `  const v${i} = ${i};`).join('\n')}\n  return 0;\n}\n`;

let roots: string[] = [];
afterEach(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
  roots = [];
});

function repo(files: Readonly<Record<string, string>>): string {
  const root = mkdtempSync(join(tmpdir(), 'tidy-'));
  roots.push(root);
  const all = {
    '.size-limit.json': SIZE_LIMIT,
    'docs/size.md': DOC_OK,
    'packages/p/src/ok.ts': fn('small', 10),
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('xtask tidy', () => {
  it('passes a clean repository (the control)', () => {
    expect(tidyProblems(repo({}))).toEqual([]);
  });

  it('counts function lines on the syntax tree, whatever the layout', () => {
    // One long arrow function hidden in an object literal, one method, one nested function.
    const text = [
      'export const table = {',
      `  handler: () => {\n${'    void 0;\n'.repeat(80)}  },`,
      '};',
      'class Box {',
      `  open(): void {\n${'    void 0;\n'.repeat(75)}  }`,
      '}',
      `function outer(): void {\n  function inner(): void {\n${'    void 0;\n'.repeat(71)}  }\n  inner();\n}`,
    ].join('\n');
    const found = longFunctionsIn('a.ts', text).map((f) => `${f.key} ${f.lines}`);
    expect(found).toEqual(['a.ts#handler 82', 'a.ts#Box.open 77', 'a.ts#outer 76', 'a.ts#outer.inner 73']);
    expect(longFunctionsIn('b.ts', fn('edge', 67))).toEqual([]); // exactly 70 lines is allowed
    expect(longFunctionsIn('b.ts', fn('edge', 68))).toEqual([{ key: 'b.ts#edge', lines: 71 }]);
  });

  it('fails on a new long function, and on a listed one that grew', () => {
    const planted = repo({ 'packages/p/src/long.ts': fn('sprawling', 80) });
    expect(tidyProblems(planted)).toEqual([expect.stringMatching(/long\.ts#sprawling: 83 lines \(limit 70\)/)]);
    const listed = repo({
      'packages/p/src/long.ts': fn('sprawling', 80),
      [RATCHET_FILE]: 'packages/p/src/long.ts#sprawling 83\n',
    });
    expect(tidyProblems(listed)).toEqual([]);
    const grown = repo({
      'packages/p/src/long.ts': fn('sprawling', 81),
      [RATCHET_FILE]: 'packages/p/src/long.ts#sprawling 83\n',
    });
    expect(tidyProblems(grown)).toEqual([expect.stringMatching(/grew to 84 lines/)]);
  });

  it('makes the ratchet shrink: an entry whose function got short or went away must go', () => {
    const split = repo({ [RATCHET_FILE]: 'packages/p/src/ok.ts#small 90\npackages/p/src/gone.ts#old 75\n' });
    const problems = tidyProblems(split);
    expect(problems).toHaveLength(2);
    expect(problems.join('\n')).toMatch(/ok\.ts#small \(90\) is short enough or gone now; delete the entry/);
  });

  it('fails on export * and export * as', () => {
    const planted = repo({
      'packages/p/src/index.ts':
        "export * from './ok.js';\nexport * as all from './ok.js';\nexport { small } from './ok.js';\n",
    });
    const problems = tidyProblems(planted);
    expect(problems).toEqual([
      expect.stringMatching(/index\.ts:1: `export \*`/),
      expect.stringMatching(/index\.ts:2: `export \*`/),
    ]);
  });

  it('fails on size claims that disagree with .size-limit.json', () => {
    const cases: Readonly<Record<string, RegExp>> = {
      '| artifact | measured | gate |\n| --- | --- | --- |\n| core | 6.5 kB | 12 kB |\n':
        /gate 12 kB is not in \.size-limit\.json/,
      '| artifact | measured | gate |\n| --- | --- | --- |\n| core | 7.4 kB | 7 kB |\n':
        /measured 7\.4 kB is over its gate 7 kB/,
      'The kernel is enforced (6.8 kB ≤ 12 kB).\n': /12 kB is not a size gate/,
      'The kernel is enforced (7.5 kB ≤ 7 kB).\n': /claims 7\.5 kB ≤ 7 kB/,
      'The kernel stays ≤ 9 kB minified.\n': /9 kB is not a size gate/,
      'Nano is gated at 300 kB.\n': /300 kB is not a size gate/,
    };
    for (const [doc, problem] of Object.entries(cases)) {
      const problems = tidyProblems(repo({ 'docs/size.md': DOC_OK, 'docs/claim.md': doc }));
      expect(problems, doc).toEqual([expect.stringMatching(problem)]);
    }
    // A target is a wish, not a gate: it may differ.
    expect(tidyProblems(repo({ 'docs/claim.md': 'Nano ≤ 120 kB is the target (not met).\n' }))).toEqual([]);
    // A gate that no docs table shows is a problem too.
    expect(tidyProblems(repo({ 'docs/size.md': 'no table\n' }))).toEqual([
      expect.stringMatching(/the 7 kB gate is in no docs table/),
    ]);
  });

  it('this repository is tidy', () => {
    expect(tidyProblems(REPO)).toEqual([]);
  });
});
