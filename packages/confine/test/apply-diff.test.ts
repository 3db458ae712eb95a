import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyHunks, applyUnifiedDiff, parseUnifiedDiff } from '../src/index.js';
import { left, makeSandbox, right } from './fixtures.js';

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' });

describe('parseUnifiedDiff', () => {
  it('parses plain diffs with a/ b/ prefixes, timestamps and no-newline markers', () => {
    const diff = [
      '--- a/src/x.ts\t2024-01-01 00:00:00',
      '+++ b/src/x.ts\t2024-01-02 00:00:00',
      '@@ -1,2 +1,2 @@',
      ' keep',
      '-old',
      '\\ No newline at end of file',
      '+new',
      '\\ No newline at end of file',
      '',
    ].join('\n');
    const [patch] = right(parseUnifiedDiff(diff));
    expect(patch).toMatchObject({ kind: 'modify', oldPath: 'src/x.ts', newPath: 'src/x.ts' });
    expect(patch?.hunks[0]).toMatchObject({ oldEndsWithoutNewline: true, newEndsWithoutNewline: true });
  });

  it('parses git headers: new, deleted, renamed, mode changes, quoted paths', () => {
    const diff = [
      'diff --git a/new.txt b/new.txt',
      'new file mode 100755',
      'index 0000000..e69de29',
      'diff --git "a/sp ace\\303\\244.txt" "b/sp ace\\303\\244.txt"',
      'deleted file mode 100644',
      '--- "a/sp ace\\303\\244.txt"',
      '+++ /dev/null',
      '@@ -1 +0,0 @@',
      '-bye',
      'diff --git a/old name.txt b/new name.txt',
      'similarity index 90%',
      'rename from old name.txt',
      'rename to new name.txt',
      'diff --git a/m.sh b/m.sh',
      'old mode 100644',
      'new mode 100755',
    ].join('\n');
    const patches = right(parseUnifiedDiff(diff));
    expect(patches.map((patch) => [patch.kind, patch.oldPath, patch.newPath])).toEqual([
      ['create', null, 'new.txt'],
      ['delete', 'sp aceä.txt', null],
      ['rename', 'old name.txt', 'new name.txt'],
      ['modify', 'm.sh', 'm.sh'],
    ]);
    expect(patches[0]?.newMode).toBe(0o100755);
    expect(patches[3]).toMatchObject({ oldMode: 0o100644, newMode: 0o100755 });
  });

  it('names the line of malformed hunks', () => {
    const short = '--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+c\n';
    expect(left(parseUnifiedDiff(short))).toMatchObject({ _tag: 'DiffParseError', line: 3 });
    const long = '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n-b\n+c\n';
    expect(left(parseUnifiedDiff(long))._tag).toBe('DiffParseError');
    expect(left(parseUnifiedDiff('just prose\n'))._tag).toBe('DiffParseError');
  });
});

describe('applyHunks', () => {
  it('applies at an offset when lines moved, with exact context', () => {
    const original = 'a\nb\nc\nd\ne\n';
    const [patch] = right(parseUnifiedDiff('--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n c\n-d\n+D\n e\n'));
    expect(right(applyHunks(original, patch?.hunks ?? []))).toEqual({ text: 'a\nb\nc\nD\ne\n', offsets: [2] });
  });

  it('refuses context that differs anywhere (no fuzz)', () => {
    const [patch] = right(parseUnifiedDiff('--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c \n'));
    expect(left(applyHunks('a\nb\nc\n', patch?.hunks ?? []))).toMatchObject({ hunkIndex: 1 });
  });

  it('round-trips diffs produced by git for random edits (property)', () => {
    const box = makeSandbox();
    git(box.rootPath, 'init', '-q');
    const line = fc.constantFrom('alpha', 'beta', 'gamma', '', '  indented', 'x', 'y');
    const content = fc
      .tuple(fc.array(line, { maxLength: 25 }), fc.boolean())
      .map(([lines, newline]) => (lines.length === 0 ? '' : lines.join('\n') + (newline ? '\n' : '')));
    fc.assert(
      fc.property(content, content, (before, after) => {
        box.put('a.txt', before);
        box.put('b.txt', after);
        let diff = '';
        try {
          execFileSync('git', ['diff', '--no-index', '--no-color', 'a.txt', 'b.txt'], {
            cwd: box.rootPath,
            encoding: 'utf8',
          });
        } catch (error) {
          diff = (error as { stdout: string }).stdout;
        }
        if (before === after) return;
        const [patch] = right(parseUnifiedDiff(diff));
        expect(right(applyHunks(before, patch?.hunks ?? [])).text).toBe(after);
      }),
      { numRuns: 30 },
    );
  });
});

describe('applyUnifiedDiff', () => {
  it('applies a git diff with modify, create, delete, rename and mode change', () => {
    const box = makeSandbox();
    box.put('keep.txt', 'one\ntwo\nthree\n');
    box.put('gone.txt', 'bye\n');
    box.put('old/name.txt', 'l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n');
    box.put('script.sh', 'echo hi\n');
    git(box.rootPath, 'init', '-q');
    git(box.rootPath, 'add', '-A');
    git(box.rootPath, 'commit', '-qm', 'base');
    box.put('keep.txt', 'one\nTWO\nthree\n');
    box.put('brand/new.txt', 'fresh\n');
    git(box.rootPath, 'rm', '-q', 'gone.txt');
    git(box.rootPath, 'mv', 'old/name.txt', 'renamed.txt');
    box.put('renamed.txt', 'l1\nl2\nl3\nl4\nl5\nl6\nl7\nL8\n');
    chmodSync(join(box.rootPath, 'script.sh'), 0o755);
    git(box.rootPath, 'add', '-A');
    const diff = git(box.rootPath, 'diff', '--cached', '-M');
    const expected = Object.fromEntries(
      ['keep.txt', 'brand/new.txt', 'renamed.txt', 'script.sh'].map((name) => [
        name,
        readFileSync(join(box.rootPath, name), 'utf8'),
      ]),
    );
    git(box.rootPath, 'reset', '-q', '--hard');
    git(box.rootPath, 'clean', '-qfd');
    const applied = right(applyUnifiedDiff(box.write, diff));
    expect(applied.files.map((file) => [file.kind, file.path]).sort()).toEqual(
      [
        ['create', 'brand/new.txt'],
        ['delete', 'gone.txt'],
        ['modify', 'keep.txt'],
        ['modify', 'script.sh'],
        ['rename', 'renamed.txt'],
      ].sort(),
    );
    for (const [name, content] of Object.entries(expected))
      expect(readFileSync(join(box.rootPath, name), 'utf8')).toBe(content);
    expect(existsSync(join(box.rootPath, 'gone.txt'))).toBe(false);
    expect(existsSync(join(box.rootPath, 'old/name.txt'))).toBe(false);
    expect(statSync(join(box.rootPath, 'script.sh')).mode & 0o777).toBe(0o755);
  });

  it('writes nothing when any hunk of any file fails, and names the hunk', () => {
    const box = makeSandbox();
    box.put('a.txt', 'a1\na2\na3\n');
    box.put('b.txt', 'b1\nb2\nb3\nb4\nb5\nb6\nb7\nb8\nb9\n');
    const diff = [
      '--- a/a.txt',
      '+++ b/a.txt',
      '@@ -1,3 +1,3 @@',
      ' a1',
      '-a2',
      '+A2',
      ' a3',
      '--- a/b.txt',
      '+++ b/b.txt',
      '@@ -1,2 +1,2 @@',
      '-b1',
      '+B1',
      ' b2',
      '@@ -7,3 +7,3 @@',
      ' b7',
      '-bX',
      '+B8',
      ' b9',
      '',
    ].join('\n');
    const error = left(applyUnifiedDiff(box.write, diff));
    expect(error).toMatchObject({ _tag: 'HunkMismatch', path: 'b.txt', hunkIndex: 2, header: '@@ -7,3 +7,3 @@' });
    expect(readFileSync(join(box.rootPath, 'a.txt'), 'utf8')).toBe('a1\na2\na3\n');
  });

  it('refuses creating over an existing file, deleting a partial file and touching .git', () => {
    const box = makeSandbox();
    box.put('exists.txt', 'x\n');
    box.put('two.txt', 'a\nb\n');
    expect(left(applyUnifiedDiff(box.write, '--- /dev/null\n+++ b/exists.txt\n@@ -0,0 +1 @@\n+y\n'))._tag).toBe(
      'PatchConflict',
    );
    expect(left(applyUnifiedDiff(box.write, '--- a/two.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n'))._tag).toBe(
      'PatchConflict',
    );
    expect(
      left(applyUnifiedDiff(box.write, '--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+evil\n'))._tag,
    ).toBe('ProtectedPath');
    expect(left(applyUnifiedDiff(box.write, '--- /dev/null\n+++ b/../escape.txt\n@@ -0,0 +1 @@\n+evil\n'))._tag).toBe(
      'PathEscape',
    );
    expect(left(applyUnifiedDiff(box.write, '--- /dev/null\n+++ /tmp/abs.txt\n@@ -0,0 +1 @@\n+evil\n'))._tag).toBe(
      'PathAbsolute',
    );
    expect(readdirSync(box.outside)).toEqual([]);
  });

  it('refuses binary and symlink patches', () => {
    const box = makeSandbox();
    const binary =
      'diff --git a/x.bin b/x.bin\nnew file mode 100644\nGIT binary patch\nliteral 3\nKcmZ?wb^rhX2LJ#7\n\nliteral 0\nHcmV?d00001\n\n';
    expect(left(applyUnifiedDiff(box.write, binary))._tag).toBe('UnsupportedPatch');
    const symlink =
      'diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n';
    expect(left(applyUnifiedDiff(box.write, symlink))._tag).toBe('UnsupportedPatch');
    expect(existsSync(join(box.rootPath, 'l'))).toBe(false);
  });

  it('refuses a diff that changes the same file twice', () => {
    const box = makeSandbox();
    box.put('f.txt', 'a\n');
    const twice = '--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+c\n';
    expect(left(applyUnifiedDiff(box.write, twice))._tag).toBe('PatchConflict');
  });

  it('rolls back earlier files when a later write fails', () => {
    const box = makeSandbox();
    box.put('a.txt', 'a\n');
    box.put('locked/b.txt', 'b\n');
    // An immutable directory makes the second write fail even for root, after planning succeeded.
    execFileSync('chattr', ['+i', join(box.rootPath, 'locked')]);
    try {
      const diff =
        '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n--- a/locked/b.txt\n+++ b/locked/b.txt\n@@ -1 +1 @@\n-b\n+B\n';
      const error = left(applyUnifiedDiff(box.write, diff));
      expect(error).toMatchObject({ _tag: 'DiffWriteFailed', path: 'locked/b.txt', rolledBack: true });
      expect(readFileSync(join(box.rootPath, 'a.txt'), 'utf8')).toBe('a\n');
      expect(readFileSync(join(box.rootPath, 'locked/b.txt'), 'utf8')).toBe('b\n');
      expect(readdirSync(box.rootPath).sort()).toEqual(['a.txt', 'locked']);
    } finally {
      execFileSync('chattr', ['-i', join(box.rootPath, 'locked')]);
    }
  });
});
