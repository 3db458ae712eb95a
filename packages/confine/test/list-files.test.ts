import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileGlob, glob, listDir, resolveReadPath } from '../src/index.js';
import { left, makeSandbox, right } from './fixtures.js';

describe('compileGlob', () => {
  const matches = (pattern: string, path: string): boolean => right(compileGlob(pattern)).test(path);

  it('supports *, ?, **, classes, braces and escapes', () => {
    expect(matches('*.ts', 'a.ts')).toBe(true);
    expect(matches('*.ts', 'src/a.ts')).toBe(false);
    expect(matches('**/*.ts', 'a.ts')).toBe(true);
    expect(matches('**/*.ts', 'src/deep/a.ts')).toBe(true);
    expect(matches('src/**', 'src/a/b')).toBe(true);
    expect(matches('src/**/x.ts', 'src/x.ts')).toBe(true);
    expect(matches('src/**/x.ts', 'srcx.ts')).toBe(false);
    expect(matches('file?.md', 'file1.md')).toBe(true);
    expect(matches('file?.md', 'file/.md')).toBe(false);
    expect(matches('[ab]*.js', 'b1.js')).toBe(true);
    expect(matches('[!ab]*.js', 'b1.js')).toBe(false);
    expect(matches('{src,test}/**/*.{ts,tsx}', 'test/x/y.tsx')).toBe(true);
    expect(matches('{src,test}/**/*.{ts,tsx}', 'lib/y.ts')).toBe(false);
    expect(matches('a\\*b', 'a*b')).toBe(true);
    expect(matches('a\\*b', 'axb')).toBe(false);
    expect(matches('a.b', 'axb')).toBe(false);
  });

  it('rejects bad patterns', () => {
    expect(left(compileGlob(''))._tag).toBe('InvalidGlob');
    expect(left(compileGlob('/etc/*'))._tag).toBe('InvalidGlob');
    expect(left(compileGlob('../*'))._tag).toBe('InvalidGlob');
    expect(left(compileGlob('{a,b'))._tag).toBe('InvalidGlob');
    expect(left(compileGlob('[ab'))._tag).toBe('InvalidGlob');
    expect(left(compileGlob('{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}'))._tag).toBe('InvalidGlob');
  });
});

describe('listDir', () => {
  it('lists sorted entries with kinds, skipping .git and node_modules', () => {
    const box = makeSandbox();
    box.put('b.txt', 'bb');
    box.put('a/x.ts', '');
    box.put('.git/HEAD', '');
    box.put('node_modules/m/index.js', '');
    box.put('run.sh', '');
    chmodSync(join(box.rootPath, 'run.sh'), 0o755);
    symlinkSync(box.outside, join(box.rootPath, 'out'));
    const listing = right(listDir(box.read, right(resolveReadPath(box.read, '.'))));
    expect(listing.entries.map((entry) => [entry.name, entry.kind])).toEqual([
      ['a', 'directory'],
      ['b.txt', 'file'],
      ['out', 'symlink'],
      ['run.sh', 'file'],
    ]);
    expect(listing.entries.find((entry) => entry.name === 'run.sh')?.executable).toBe(true);
    expect(listing.entries.find((entry) => entry.name === 'b.txt')?.sizeBytes).toBe(2);
    expect(listing.truncated).toBe(false);
    const everything = right(listDir(box.read, right(resolveReadPath(box.read, '.')), { skipNames: [] }));
    expect(everything.entries.map((entry) => entry.name)).toContain('.git');
  });

  it('is bounded', () => {
    const box = makeSandbox();
    for (let index = 0; index < 30; index += 1) box.put(`f${index}.txt`, '');
    const listing = right(listDir(box.read, right(resolveReadPath(box.read, '.')), { maxEntries: 10 }));
    expect(listing.entries).toHaveLength(10);
    expect(listing.truncated).toBe(true);
  });

  it('refuses files', () => {
    const box = makeSandbox();
    box.put('f.txt', '');
    expect(left(listDir(box.read, right(resolveReadPath(box.read, 'f.txt'))))._tag).toBe('NotADirectory');
  });
});

describe('glob', () => {
  it('walks depth first in name order, never entering symlinks, .git or node_modules', () => {
    const box = makeSandbox();
    box.put('src/b.ts', '');
    box.put('src/a/z.ts', '');
    box.put('src/a.ts', '');
    box.put('test/t.ts', '');
    box.put('.git/x.ts', '');
    box.put('node_modules/m/i.ts', '');
    writeFileSync(join(box.outside, 'leak.ts'), '');
    symlinkSync(box.outside, join(box.rootPath, 'src/out'));
    const result = right(glob(box.read, '**/*.ts'));
    expect(result.matches.map((match) => match.path)).toEqual(['src/a/z.ts', 'src/a.ts', 'src/b.ts', 'test/t.ts']);
    expect(result.truncated).toBe(false);
    const scoped = right(glob(box.read, 'src/*'));
    expect(scoped.matches.map((match) => [match.path, match.kind])).toEqual([
      ['src/a', 'directory'],
      ['src/a.ts', 'file'],
      ['src/b.ts', 'file'],
      ['src/out', 'symlink'],
    ]);
  });

  it('bounds results and visited entries', () => {
    const box = makeSandbox();
    for (let index = 0; index < 20; index += 1) box.put(`d/f${index}.txt`, '');
    const few = right(glob(box.read, '**/*.txt', { maxResults: 5 }));
    expect(few.matches).toHaveLength(5);
    expect(few.truncated).toBe(true);
    const shallow = right(glob(box.read, '**/*.txt', { maxVisitedEntries: 8 }));
    expect(shallow.truncated).toBe(true);
    expect(shallow.visitedEntries).toBeLessThanOrEqual(8);
  });

  it('returns nothing for a missing or symlinked static prefix', () => {
    const box = makeSandbox();
    mkdirSync(join(box.outside, 'sub'));
    writeFileSync(join(box.outside, 'sub/x.ts'), '');
    symlinkSync(box.outside, join(box.rootPath, 'link'));
    expect(right(glob(box.read, 'missing/**')).matches).toEqual([]);
    expect(right(glob(box.read, 'link/sub/*.ts')).matches).toEqual([]);
  });
});
