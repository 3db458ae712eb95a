import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ConfinedReadPath,
  type ConfinedWritePath,
  type ConfinedWritePath as ConfinedWritePathClass,
  FsReadCap,
  type FsWriteCap,
  normalizeComponents,
  resolveReadPath,
  resolveWritePath,
  WorktreeRoot,
  writeText,
} from '../src/index.js';
import { left, makeSandbox, right } from './fixtures.js';

describe('WorktreeRoot', () => {
  it('opens an absolute directory and resolves symlinks in it once', () => {
    const box = makeSandbox();
    symlinkSync(box.rootPath, join(box.base, 'alias'));
    const root = right(WorktreeRoot.open(join(box.base, 'alias')));
    expect(root.path).toBe(realpathSync(box.rootPath));
    expect(root.equals(box.root)).toBe(true);
  });

  it('refuses relative, missing, file and NUL roots', () => {
    const box = makeSandbox();
    box.put('file.txt', 'x');
    expect(left(WorktreeRoot.open('relative/dir'))._tag).toBe('PathAbsolute');
    expect(left(WorktreeRoot.open(join(box.base, 'missing')))._tag).toBe('NotFound');
    expect(left(WorktreeRoot.open(join(box.rootPath, 'file.txt')))._tag).toBe('NotADirectory');
    expect(left(WorktreeRoot.open(`${box.rootPath}\u0000x`))._tag).toBe('PathNulByte');
  });
});

describe('normalizeComponents', () => {
  it('drops . and empty components and applies ..', () => {
    expect(right(normalizeComponents('a//b/./c/../d/'))).toEqual(['a', 'b', 'd']);
    expect(right(normalizeComponents('.'))).toEqual([]);
  });

  it('refuses climbing above the start, NUL and oversize input', () => {
    expect(left(normalizeComponents('a/../../b'))._tag).toBe('PathEscape');
    expect(left(normalizeComponents('..'))._tag).toBe('PathEscape');
    expect(left(normalizeComponents('a\u0000b'))._tag).toBe('PathNulByte');
    expect(left(normalizeComponents('x'.repeat(5000)))._tag).toBe('PathTooLong');
    expect(left(normalizeComponents(`${'é'.repeat(200)}`))._tag).toBe('PathTooLong');
  });
});

describe('resolveReadPath', () => {
  it('resolves existing files and directories to canonical relative paths', () => {
    const box = makeSandbox();
    box.put('src/lib/a.ts', 'x');
    expect(right(resolveReadPath(box.read, 'src/./lib/../lib/a.ts')).relative).toBe('src/lib/a.ts');
    expect(right(resolveReadPath(box.read, '.')).relative).toBe('');
    expect(right(resolveReadPath(box.read, 'src')).absolute).toBe(join(box.rootPath, 'src'));
  });

  it('follows symlinks that stay inside the root and reports where they lead', () => {
    const box = makeSandbox();
    box.put('real/a.txt', 'x');
    symlinkSync('real', join(box.rootPath, 'alias'));
    expect(right(resolveReadPath(box.read, 'alias/a.txt')).relative).toBe('real/a.txt');
  });

  it('refuses symlink escapes at any component, absolute paths and missing files', () => {
    const box = makeSandbox();
    writeFileSync(join(box.outside, 'secret'), 's');
    mkdirSync(join(box.rootPath, 'deep/er'), { recursive: true });
    symlinkSync(box.outside, join(box.rootPath, 'deep/er/out'));
    symlinkSync('../../..', join(box.rootPath, 'deep/er/up'));
    expect(left(resolveReadPath(box.read, 'deep/er/out/secret'))._tag).toBe('SymlinkEscape');
    expect(left(resolveReadPath(box.read, 'deep/er/up/outside/secret'))._tag).toBe('SymlinkEscape');
    expect(left(resolveReadPath(box.read, join(box.outside, 'secret')))._tag).toBe('PathAbsolute');
    expect(left(resolveReadPath(box.read, 'nope.txt'))._tag).toBe('NotFound');
  });

  it('accepts absolute paths only inside a configured read-only root', () => {
    const box = makeSandbox();
    writeFileSync(join(box.outside, 'sdk.h'), 'x');
    const extra = right(WorktreeRoot.open(box.outside));
    const cap = right(FsReadCap.grant(box.root, 'test', { readOnlyRoots: [extra] }));
    const path = right(resolveReadPath(cap, join(box.outside, 'sdk.h')));
    expect(path.root.equals(extra)).toBe(true);
    expect(path.relative).toBe('sdk.h');
    expect(left(resolveReadPath(cap, '/etc/passwd'))._tag).toBe('PathAbsolute');
  });

  it('refuses FIFOs and sockets for reading', () => {
    const box = makeSandbox();
    execFileSync('mkfifo', [join(box.rootPath, 'pipe')]);
    expect(left(resolveReadPath(box.read, 'pipe'))._tag).toBe('SpecialFileRejected');
  });
});

describe('resolveWritePath', () => {
  it('accepts new files under existing or missing directories', () => {
    const box = makeSandbox();
    expect(right(resolveWritePath(box.write, 'new/dir/file.ts')).relative).toBe('new/dir/file.ts');
    box.put('src/x.ts', '');
    expect(right(resolveWritePath(box.write, 'src/y.ts')).relative).toBe('src/y.ts');
  });

  it('refuses the root, absolute paths, escapes, .git, directories, hard links and dangling symlinks', () => {
    const box = makeSandbox();
    box.put('dir/file.txt', 'x');
    box.put('linked.txt', 'x');
    linkSync(join(box.rootPath, 'linked.txt'), join(box.rootPath, 'second-name.txt'));
    symlinkSync(join(box.outside, 'not-yet'), join(box.rootPath, 'dangling'));
    mkdirSync(join(box.rootPath, '.git/hooks'), { recursive: true });
    symlinkSync('.git/hooks', join(box.rootPath, 'hooks-alias'));
    const tag = (input: string): string => left(resolveWritePath(box.write, input))._tag;
    expect(tag('')).toBe('PathEmpty');
    expect(tag('.')).toBe('PathEmpty');
    expect(tag('/tmp/x')).toBe('PathAbsolute');
    expect(tag('../x')).toBe('PathEscape');
    expect(tag('.git/config')).toBe('ProtectedPath');
    expect(tag('sub/.GIT/hooks/pre-commit')).toBe('ProtectedPath');
    expect(tag('hooks-alias/pre-commit')).toBe('ProtectedPath');
    expect(tag('dir')).toBe('IsDirectory');
    expect(tag('linked.txt')).toBe('HardLinkRejected');
    expect(tag('dangling')).toBe('DanglingSymlink');
    expect(tag('dir/file.txt/under')).toBe('NotADirectory');
  });
});

describe('property: any relative path string resolves inside the root or is refused', () => {
  const component = fc.oneof(
    fc.constantFrom('.', '..', '', 'a', 'b', 'link', 'out', 'up', '.git', 'file.txt', 'dir'),
    fc.string({ maxLength: 6 }),
  );
  const pathString = fc.array(component, { maxLength: 8 }).map((parts) => parts.join('/'));

  it('holds for reads and writes, including symlinks inside and outside the root', () => {
    const box = makeSandbox();
    box.put('a/b/file.txt', 'x');
    box.put('dir/file.txt', 'x');
    symlinkSync(box.outside, join(box.rootPath, 'out'));
    symlinkSync('..', join(box.rootPath, 'a/up'));
    symlinkSync('../dir', join(box.rootPath, 'a/link'));
    writeFileSync(join(box.outside, 'file.txt'), 'secret');
    const inside = (path: ConfinedReadPath | ConfinedWritePath): boolean =>
      path.absolute === box.rootPath || path.absolute.startsWith(`${box.rootPath}/`);
    fc.assert(
      fc.property(pathString, (input) => {
        const read = resolveReadPath(box.read, input);
        if (read._tag === 'Right') {
          expect(inside(read.right)).toBe(true);
          expect(realpathSync(read.right.absolute)).toBe(read.right.absolute);
        }
        const write = resolveWritePath(box.write, input);
        if (write._tag === 'Right') {
          expect(inside(write.right)).toBe(true);
          expect(write.right.relative.split('/')).not.toContain('.git');
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('type-level: confined paths and capabilities cannot be forged', () => {
  it('rejects strings and plain objects where authority objects are required', () => {
    const box = makeSandbox();
    const path = right(resolveWritePath(box.write, 'ok.txt'));
    const readPath = right(resolveReadPath(box.read, '.'));
    // @ts-expect-error a raw string is not a ConfinedWritePath
    expect(() => writeText(box.write, 'ok.txt', 'x')).toThrow();
    // @ts-expect-error a look-alike object is not a ConfinedWritePath (private fields make it nominal)
    expect(() => writeText(box.write, { root: box.root, relative: 'ok.txt', absolute: '' }, 'x')).toThrow();
    // @ts-expect-error a read path is not a write path
    const readAsWrite: ConfinedWritePath = readPath;
    expect(readAsWrite).toBeDefined();
    // @ts-expect-error a read capability is not a write capability
    const readAsWriteCap: FsWriteCap = box.read;
    expect(readAsWriteCap).toBeDefined();
    // @ts-expect-error a plain object is not a capability
    expect(() => writeText({ root: box.root, scope: 'x' }, path, 'x')).toThrow();
  });

  it('rejects hand-made roots, capabilities and paths at compile time', () => {
    const box = makeSandbox();
    // @ts-expect-error a plain object is not a WorktreeRoot
    const fakeRoot: WorktreeRoot = { path: '/', equals: () => true };
    expect(fakeRoot).toBeDefined();
    // @ts-expect-error roots come from WorktreeRoot.open (private constructor)
    expect(() => new WorktreeRoot('/', 0, 0)).toBeDefined();
    // @ts-expect-error capabilities come from grant (private constructor)
    expect(() => new FsReadCap(box.root, 'x', [])).toBeDefined();
    const path = right(resolveWritePath(box.write, 'ok.txt'));
    const Ctor = path.constructor as typeof ConfinedWritePathClass;
    // @ts-expect-error only the resolver holds the mint key
    expect(() => new Ctor(Symbol('confine.mint'), box.root, '../escape')).toThrow(TypeError);
  });

  it('refuses minting a confined path outside the resolver at run time', () => {
    const box = makeSandbox();
    const path = right(resolveWritePath(box.write, 'ok.txt'));
    const Ctor = path.constructor as unknown as new (key: symbol, root: WorktreeRoot, relative: string) => unknown;
    expect(() => new Ctor(Symbol('confine.mint'), box.root, '../escape')).toThrow(TypeError);
  });
});
