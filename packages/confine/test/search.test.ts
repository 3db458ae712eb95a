import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveReadPath, ripgrepAvailable, type SearchEngine, search } from '../src/index.js';
import { left, makeSandbox, right } from './fixtures.js';

function fixture() {
  const box = makeSandbox();
  box.put('src/a.ts', 'const needle = 1;\nno match here\n  let NEEDLE = 2;\n');
  box.put('src/deep/b.ts', 'x\r\nfind the needle\r\n');
  box.put('src/c.md', 'needle in markdown\n');
  box.put('.hidden/h.txt', 'hidden needle\n');
  box.put('.git/config', 'needle in git metadata\n');
  box.put('node_modules/pkg/index.js', 'needle in dependency\n');
  box.put('ünï/ç.txt', 'héllo needle\n');
  box.put('bin.dat', 'needle\u0000binary\n');
  box.put('big.txt', `${'x'.repeat(5000)}\nneedle\n`);
  box.put('-dash.txt', 'needle starting with dash\n');
  writeFileSync(join(box.outside, 'secret.txt'), 'needle outside\n');
  symlinkSync(box.outside, join(box.rootPath, 'escape'));
  symlinkSync(join(box.outside, 'secret.txt'), join(box.rootPath, 'escape.txt'));
  return box;
}

const engines: SearchEngine[] = ['ripgrep', 'javascript'];

describe('search', () => {
  it('ripgrep is installed on this machine (the ripgrep engine is really exercised)', () => {
    expect(ripgrepAvailable()).toBe(true);
  });

  it('both engines return the same matches in the same order', async () => {
    const box = fixture();
    const results = await Promise.all(
      engines.map(async (engine) => right(await search(box.read, { pattern: 'needle', engine, maxFileBytes: 4096 }))),
    );
    const [ripgrep, javascript] = results;
    expect(ripgrep?.engine).toBe('ripgrep');
    expect(javascript?.engine).toBe('javascript');
    expect(ripgrep?.matches).toEqual(javascript?.matches);
    expect(javascript?.matches).toEqual([
      { path: '-dash.txt', lineNumber: 1, column: 1, text: 'needle starting with dash' },
      { path: '.hidden/h.txt', lineNumber: 1, column: 8, text: 'hidden needle' },
      { path: 'src/a.ts', lineNumber: 1, column: 7, text: 'const needle = 1;' },
      { path: 'src/c.md', lineNumber: 1, column: 1, text: 'needle in markdown' },
      { path: 'src/deep/b.ts', lineNumber: 2, column: 10, text: 'find the needle' },
      { path: 'ünï/ç.txt', lineNumber: 1, column: 8, text: 'héllo needle' },
    ]);
    expect(ripgrep?.truncated).toBe(false);
  });

  for (const engine of engines) {
    describe(`engine ${engine}`, () => {
      it('supports case-insensitive, fixed strings, regexes, globs and a start path', async () => {
        const box = fixture();
        const insensitive = right(
          await search(box.read, { pattern: 'NEEDLE', caseInsensitive: true, engine, glob: 'src/**' }),
        );
        expect(insensitive.matches.map((match) => `${match.path}:${match.lineNumber}`)).toEqual([
          'src/a.ts:1',
          'src/a.ts:3',
          'src/c.md:1',
          'src/deep/b.ts:2',
        ]);
        const fixed = right(await search(box.read, { pattern: 'needle = 1;', fixedStrings: true, engine }));
        expect(fixed.matches.map((match) => match.path)).toEqual(['src/a.ts']);
        const regex = right(await search(box.read, { pattern: '^\\s+let\\s+\\w+', engine }));
        expect(regex.matches.map((match) => [match.path, match.column])).toEqual([['src/a.ts', 1]]);
        const scoped = right(
          await search(box.read, { pattern: 'needle', engine, path: right(resolveReadPath(box.read, 'src/deep')) }),
        );
        expect(scoped.matches.map((match) => match.path)).toEqual(['src/deep/b.ts']);
        const oneFile = right(
          await search(box.read, { pattern: 'needle', engine, path: right(resolveReadPath(box.read, 'src/c.md')) }),
        );
        expect(oneFile.matches.map((match) => match.path)).toEqual(['src/c.md']);
      });

      it('bounds matches and line length', async () => {
        const box = makeSandbox();
        box.put('many.txt', `${'hit and a long tail of text\n'.repeat(50)}`);
        const bounded = right(await search(box.read, { pattern: 'hit', engine, maxMatches: 7, maxLineChars: 5 }));
        expect(bounded.matches).toHaveLength(7);
        expect(bounded.truncated).toBe(true);
        expect(bounded.matches[0]?.text).toBe('hit a');
      });

      it('never follows symlinks out of the root', async () => {
        const box = fixture();
        const result = right(await search(box.read, { pattern: 'outside', engine }));
        expect(result.matches).toEqual([]);
      });

      it('treats a pattern that looks like a flag as a pattern', async () => {
        const box = fixture();
        const result = right(await search(box.read, { pattern: '--files', fixedStrings: true, engine }));
        expect(result.matches).toEqual([]);
      });
    });
  }

  it('rejects invalid patterns and globs before running anything', async () => {
    const box = fixture();
    expect(left(await search(box.read, { pattern: '(' }))._tag).toBe('InvalidPattern');
    expect(left(await search(box.read, { pattern: '' }))._tag).toBe('InvalidPattern');
    expect(left(await search(box.read, { pattern: 'a\u0000b' }))._tag).toBe('InvalidPattern');
    expect(left(await search(box.read, { pattern: 'a', glob: '/abs/*' }))._tag).toBe('InvalidGlob');
  });

  it('reports a missing ripgrep as a typed failure, and auto falls back to JS', async () => {
    const box = fixture();
    const missing = left(
      await search(box.read, { pattern: 'needle', engine: 'ripgrep', ripgrepPath: '/nonexistent/rg' }),
    );
    expect(missing._tag).toBe('SearchFailed');
    const fallback = right(await search(box.read, { pattern: 'needle', ripgrepPath: '/nonexistent/rg' }));
    expect(fallback.engine).toBe('javascript');
  });
});
