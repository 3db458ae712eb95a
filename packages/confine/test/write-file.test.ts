import { chmodSync, readdirSync, readFileSync, renameSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  deleteFile,
  FsWriteCap,
  readBytes,
  readText,
  resolveReadPath,
  resolveWritePath,
  WorktreeRoot,
  writeBytes,
  writeText,
} from '../src/index.js';
import { left, makeSandbox, right } from './fixtures.js';

describe('writeText / writeBytes', () => {
  it('creates parents, writes atomically and leaves no temp files', () => {
    const box = makeSandbox();
    const path = right(resolveWritePath(box.write, 'a/b/c.txt'));
    const outcome = right(writeText(box.write, path, 'hello\n'));
    expect(outcome).toMatchObject({ path: 'a/b/c.txt', bytesWritten: 6, created: true, mode: 0o644 });
    expect(readFileSync(join(box.rootPath, 'a/b/c.txt'), 'utf8')).toBe('hello\n');
    expect(readdirSync(join(box.rootPath, 'a/b'))).toEqual(['c.txt']);
    const again = right(writeText(box.write, path, 'bye\n'));
    expect(again.created).toBe(false);
    expect(readFileSync(join(box.rootPath, 'a/b/c.txt'), 'utf8')).toBe('bye\n');
  });

  it('keeps the executable bit of an existing file and sets it when asked', () => {
    const box = makeSandbox();
    box.put('run.sh', '#!/bin/sh\n');
    chmodSync(join(box.rootPath, 'run.sh'), 0o755);
    const script = right(resolveWritePath(box.write, 'run.sh'));
    expect(right(writeText(box.write, script, '#!/bin/sh\necho hi\n')).mode).toBe(0o755);
    expect(statSync(join(box.rootPath, 'run.sh')).mode & 0o777).toBe(0o755);
    const tool = right(resolveWritePath(box.write, 'bin/tool'));
    right(writeText(box.write, tool, 'x', { executable: true }));
    expect(statSync(join(box.rootPath, 'bin/tool')).mode & 0o777).toBe(0o755);
    right(writeText(box.write, script, 'y', { executable: false }));
    expect(statSync(join(box.rootPath, 'run.sh')).mode & 0o777).toBe(0o644);
  });

  it('refuses content over the bound, and missing parents when told not to create them', () => {
    const box = makeSandbox();
    const path = right(resolveWritePath(box.write, 'x/big.bin'));
    expect(left(writeBytes(box.write, path, new Uint8Array(100), { maxBytes: 10 }))._tag).toBe('FileTooLarge');
    expect(left(writeBytes(box.write, path, new Uint8Array(1), { createParents: false }))._tag).toBe('NotFound');
  });

  it('refuses a path minted for another root (RootMismatch)', () => {
    const one = makeSandbox();
    const two = makeSandbox();
    const path = right(resolveWritePath(one.write, 'f.txt'));
    expect(left(writeText(two.write, path, 'x'))._tag).toBe('RootMismatch');
  });

  it('refuses when a directory on the path became a symlink after resolving', () => {
    const box = makeSandbox();
    box.put('dir/keep.txt', 'x');
    const path = right(resolveWritePath(box.write, 'dir/new.txt'));
    renameSync(join(box.rootPath, 'dir'), join(box.rootPath, 'moved'));
    symlinkSync(box.outside, join(box.rootPath, 'dir'));
    expect(left(writeText(box.write, path, 'x'))._tag).toBe('RaceDetected');
    expect(readdirSync(box.outside)).toEqual([]);
  });

  it('refuses when the root directory itself was replaced', () => {
    const box = makeSandbox();
    const path = right(resolveWritePath(box.write, 'f.txt'));
    renameSync(box.rootPath, `${box.rootPath}-old`);
    symlinkSync(box.outside, box.rootPath);
    expect(left(writeText(box.write, path, 'x'))._tag).toBe('RootChanged');
    expect(readdirSync(box.outside)).toEqual([]);
  });

  it('grants only through FsWriteCap.grant with a sane scope', () => {
    const box = makeSandbox();
    expect(left(FsWriteCap.grant(box.root, ''))._tag).toBe('InvalidCapability');
    expect(left(FsWriteCap.grant(box.root, 'a\nb'))._tag).toBe('InvalidCapability');
    expect(right(WorktreeRoot.open(box.rootPath)).equals(box.root)).toBe(true);
  });
});

describe('deleteFile', () => {
  it('removes a regular file and refuses directories', () => {
    const box = makeSandbox();
    box.put('d/f.txt', 'x');
    right(deleteFile(box.write, right(resolveWritePath(box.write, 'd/f.txt'))));
    expect(readdirSync(join(box.rootPath, 'd'))).toEqual([]);
    expect(left(resolveWritePath(box.write, 'd'))._tag).toBe('IsDirectory');
  });
});

describe('readText / readBytes', () => {
  it('returns line ranges with their line endings and the whole-file hash', () => {
    const box = makeSandbox();
    box.put('f.txt', 'one\ntwo\r\nthree\nfour');
    const path = right(resolveReadPath(box.read, 'f.txt'));
    const all = right(readText(box.read, path));
    expect(all).toMatchObject({
      startLine: 1,
      endLine: 4,
      totalLines: 4,
      truncated: false,
      text: 'one\ntwo\r\nthree\nfour',
    });
    const middle = right(readText(box.read, path, { startLine: 2, endLine: 3 }));
    expect(middle.text).toBe('two\r\nthree\n');
    expect(middle.sha256).toBe(all.sha256);
    expect(right(readText(box.read, path, { startLine: 3, endLine: 99 })).text).toBe('three\nfour');
    expect(left(readText(box.read, path, { startLine: 9 }))._tag).toBe('InvalidLineRange');
    expect(left(readText(box.read, path, { startLine: 3, endLine: 2 }))._tag).toBe('InvalidLineRange');
  });

  it('truncates at the output bound on a line boundary', () => {
    const box = makeSandbox();
    box.put('big.txt', 'aaaa\n'.repeat(100));
    const read = right(readText(box.read, right(resolveReadPath(box.read, 'big.txt')), { maxOutputBytes: 12 }));
    expect(read).toMatchObject({ text: 'aaaa\naaaa\n', endLine: 2, truncated: true, totalLines: 100 });
  });

  it('detects binary files and refuses oversize ones', () => {
    const box = makeSandbox();
    box.put('bin.dat', 'abc\u0000def');
    box.put('latin1.txt', '');
    right(
      writeBytes(
        box.write,
        right(resolveWritePath(box.write, 'latin1.txt')),
        Uint8Array.from([0x63, 0x61, 0x66, 0xe9]),
      ),
    );
    box.put('large.txt', 'x'.repeat(2000));
    expect(left(readText(box.read, right(resolveReadPath(box.read, 'bin.dat'))))._tag).toBe('BinaryFile');
    expect(left(readText(box.read, right(resolveReadPath(box.read, 'latin1.txt'))))._tag).toBe('BinaryFile');
    const large = right(resolveReadPath(box.read, 'large.txt'));
    expect(left(readBytes(box.read, large, { maxFileBytes: 1000 }))._tag).toBe('FileTooLarge');
    expect(right(readBytes(box.read, large)).bytes.length).toBe(2000);
  });

  it('handles empty files', () => {
    const box = makeSandbox();
    box.put('empty.txt', '');
    expect(right(readText(box.read, right(resolveReadPath(box.read, 'empty.txt'))))).toMatchObject({
      text: '',
      totalLines: 0,
    });
  });
});
