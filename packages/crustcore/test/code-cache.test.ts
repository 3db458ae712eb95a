import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cacheCandidates, cacheFileName, writeCodeCache } from '../src/cli/code-cache.js';

const roots: string[] = [];
const scratch = (): string => {
  const root = mkdtempSync(join(tmpdir(), 'crustcore-code-cache-'));
  roots.push(root);
  return root;
};
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe('where the code cache lives', () => {
  it('next to the bundle first, then $XDG_CACHE_HOME/crustcore', () => {
    expect(cacheCandidates('/opt/cc/dist/crustcore-cli.cjs', { XDG_CACHE_HOME: '/x/cache', HOME: '/h' })).toEqual([
      '/opt/cc/dist',
      '/x/cache/crustcore',
      '/h/.crustcore/cache',
    ]);
  });

  it("last, CrustCore's own state directory (an absolute $CRUSTCORE_HOME, else ~/.crustcore): its cache/", () => {
    expect(cacheCandidates('/d/crustcore-cli.cjs', { HOME: '/home/u', CRUSTCORE_HOME: '/state' })).toEqual([
      '/d',
      '/home/u/.cache/crustcore',
      '/state/cache',
    ]);
    expect(cacheCandidates('/d/crustcore-cli.cjs', { HOME: '/home/u', CRUSTCORE_HOME: 'rel' })).toEqual([
      '/d',
      '/home/u/.cache/crustcore',
      '/home/u/.crustcore/cache',
    ]);
  });

  it('~/.cache/crustcore without XDG_CACHE_HOME, or with a relative one (the spec ignores those)', () => {
    expect(cacheCandidates('/d/crustcore-cli.cjs', { HOME: '/home/u' })).toEqual([
      '/d',
      '/home/u/.cache/crustcore',
      '/home/u/.crustcore/cache',
    ]);
    expect(cacheCandidates('/d/crustcore-cli.cjs', { HOME: '/home/u', XDG_CACHE_HOME: 'rel' })).toEqual([
      '/d',
      '/home/u/.cache/crustcore',
      '/home/u/.crustcore/cache',
    ]);
  });

  it("the name carries the bundle's hash, Node's version and the architecture", () => {
    const name = cacheFileName('0123456789abcdef');
    expect(name).toBe(`crustcore-cli-0123456789abcdef-${process.version}-${process.arch}.v8cache`);
    expect(cacheFileName('fedcba9876543210')).not.toBe(name);
  });
});

describe('writeCodeCache', () => {
  it('writes to the first directory that takes the file and removes the other builds’ caches there', () => {
    const root = scratch();
    const blocked = join(root, 'not-a-directory');
    writeFileSync(blocked, 'a file where the directory would be');
    const second = join(root, 'user-cache');
    mkdirSync(second);
    // Three other builds, oldest first: the two newest stay (two installs may share a user cache).
    const others = ['0', '1', '2'].map((digit) => `crustcore-cli-${digit.repeat(16)}-v20.0.0-x64.v8cache`);
    others.forEach((other, age) => {
      writeFileSync(join(second, other), 'old');
      utimesSync(join(second, other), 1_000_000 + age, 1_000_000 + age);
    });
    writeFileSync(join(second, 'notes.txt'), 'not ours');
    const name = cacheFileName('0123456789abcdef');
    writeCodeCache([blocked, second], name, Buffer.from('cache bytes'));
    expect(readFileSync(join(second, name), 'utf8')).toBe('cache bytes');
    expect(readdirSync(second).sort()).toEqual([others[1], others[2], name, 'notes.txt'].sort());
  });

  it('leaves no temporary file behind when no directory takes it (control: nothing is written)', () => {
    const root = scratch();
    const blocked = join(root, 'file');
    writeFileSync(blocked, 'x');
    writeCodeCache([blocked, join(blocked, 'below-a-file')], cacheFileName('0123456789abcdef'), Buffer.from('c'));
    expect(readdirSync(root)).toEqual(['file']);
  });
});
