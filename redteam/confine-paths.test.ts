/**
 * Red team: a model (or a sandboxed process working for it) tries to make
 * the host-side file tools read or write outside the worktree, or write git
 * metadata. Every attack uses the real file system.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  applyUnifiedDiff,
  editText,
  FsReadCap,
  FsWriteCap,
  readText,
  resolveReadPath,
  resolveWritePath,
  WorktreeRoot,
  writeText,
} from '@crustcore/confine';
import type { Result } from '@crustcore/kernel';
import { afterAll, describe, expect, it } from 'vitest';

const base = mkdtempSync(join(tmpdir(), 'redteam-confine-'));
const rootPath = join(base, 'root');
const outside = join(base, 'outside');
mkdirSync(rootPath);
mkdirSync(outside);
const servers: Server[] = [];
afterAll(() => {
  for (const server of servers) server.close();
  rmSync(base, { recursive: true, force: true });
});

function right<E, A>(result: Result<E, A>): A {
  if (result._tag === 'Left') throw new Error(`expected Right, got ${JSON.stringify(result.left)}`);
  return result.right;
}
const tagOf = <E extends { _tag: string }, A>(result: Result<E, A>): string =>
  result._tag === 'Left' ? result.left._tag : 'Right';

const root = right(WorktreeRoot.open(rootPath));
const writeCap = right(FsWriteCap.grant(root, 'redteam'));
const readCap = right(FsReadCap.grant(root, 'redteam'));
const VICTIM = join(outside, 'victim.txt');
writeFileSync(VICTIM, 'original victim content\n');

/** Everything outside the root is exactly as the test set it up. */
function assertOutsideUntouched(): void {
  expect(readdirSync(outside).sort()).toEqual(['victim.txt']);
  expect(readFileSync(VICTIM, 'utf8')).toBe('original victim content\n');
}

/** Attempts a write through the resolver and, if it resolves, the tool. */
function attemptWrite(input: string): string {
  const path = resolveWritePath(writeCap, input);
  if (path._tag === 'Left') return path.left._tag;
  return tagOf(writeText(writeCap, path.right, 'pwned\n'));
}

describe('writes that try to leave the root', () => {
  it('refuses ../ escapes in every spelling', () => {
    for (const input of ['../outside/victim.txt', 'a/../../outside/x', './../x', 'a/b/../../../x', '..', '../']) {
      expect(attemptWrite(input)).toBe('PathEscape');
    }
    // Encoded or Windows-style dots are plain names on Linux: they stay inside the root.
    expect(attemptWrite('%2e%2e/%2e%2e/x')).toBe('Right');
    expect(attemptWrite('..\\..\\x')).toBe('Right');
    expect(existsSync(join(rootPath, '..\\..\\x'))).toBe(true);
    assertOutsideUntouched();
  });

  it('refuses absolute paths, including ones that point into the root', () => {
    expect(attemptWrite(VICTIM)).toBe('PathAbsolute');
    expect(attemptWrite(join(rootPath, 'inside.txt'))).toBe('PathAbsolute');
    expect(attemptWrite('/etc/passwd')).toBe('PathAbsolute');
    assertOutsideUntouched();
  });

  it('refuses NUL bytes and oversize paths', () => {
    expect(attemptWrite('ok.txt\u0000/../../outside/victim.txt')).toBe('PathNulByte');
    expect(attemptWrite(`${'a/'.repeat(3000)}x`)).toBe('PathTooLong');
  });

  it('refuses a symlinked file pointing outside (existing and dangling targets)', () => {
    symlinkSync(VICTIM, join(rootPath, 'file-link.txt'));
    symlinkSync(join(outside, 'created-by-attack.txt'), join(rootPath, 'dangling-link.txt'));
    expect(attemptWrite('file-link.txt')).toBe('SymlinkEscape');
    expect(attemptWrite('dangling-link.txt')).toBe('DanglingSymlink');
    expect(tagOf(resolveReadPath(readCap, 'file-link.txt'))).toBe('SymlinkEscape');
    assertOutsideUntouched();
  });

  it('refuses a symlinked parent directory at any depth, including chains and relative links', () => {
    mkdirSync(join(rootPath, 'a/b'), { recursive: true });
    symlinkSync(outside, join(rootPath, 'a/b/out'));
    symlinkSync('../../..', join(rootPath, 'a/b/up'));
    symlinkSync('a/b/out', join(rootPath, 'chain'));
    expect(attemptWrite('a/b/out/new.txt')).toBe('SymlinkEscape');
    expect(attemptWrite('a/b/out/victim.txt')).toBe('SymlinkEscape');
    expect(attemptWrite('a/b/up/outside/victim.txt')).toBe('SymlinkEscape');
    expect(attemptWrite('chain/deeper/new.txt')).toBe('SymlinkEscape');
    expect(tagOf(resolveReadPath(readCap, 'chain/victim.txt'))).toBe('SymlinkEscape');
    assertOutsideUntouched();
  });

  it('refuses writing through a hard link to a file outside the root', () => {
    linkSync(VICTIM, join(rootPath, 'hard-link.txt'));
    expect(attemptWrite('hard-link.txt')).toBe('HardLinkRejected');
    const edit = resolveWritePath(writeCap, 'hard-link.txt');
    expect(tagOf(edit)).toBe('HardLinkRejected');
    assertOutsideUntouched();
    unlinkSync(join(rootPath, 'hard-link.txt'));
  });

  it('refuses a hard link created after the path was resolved', () => {
    const path = right(resolveWritePath(writeCap, 'late-link.txt'));
    linkSync(VICTIM, join(rootPath, 'late-link.txt'));
    expect(tagOf(writeText(writeCap, path, 'pwned\n'))).toBe('HardLinkRejected');
    assertOutsideUntouched();
    unlinkSync(join(rootPath, 'late-link.txt'));
  });

  it('refuses a symlink swapped in for the file after resolving (no write through it)', () => {
    writeFileSync(join(rootPath, 'swap.txt'), 'mine\n');
    const path = right(resolveWritePath(writeCap, 'swap.txt'));
    unlinkSync(join(rootPath, 'swap.txt'));
    symlinkSync(VICTIM, join(rootPath, 'swap.txt'));
    expect(tagOf(writeText(writeCap, path, 'pwned\n'))).toBe('RaceDetected');
    assertOutsideUntouched();
  });
});

/**
 * A watchdog process. When the test says "done" on its stdin, it opens the
 * FIFO without blocking, reads what is there and reports `clean:<bytes>`.
 * If "done" never comes (a tool blocked the test's thread on the FIFO), it
 * opens the FIFO read-write after `rescueMs` — which unblocks any opener on
 * either side — and reports `rescued:<bytes>`, so the test finishes and
 * fails. Which of the two happened is the verdict: no clock is compared.
 */
function fifoWatchdog(fifo: string, rescueMs: number): { child: ChildProcess; report: Promise<string> } {
  const script = `
    const fs = require('node:fs');
    const drain = (how) => {
      const fd = fs.openSync(process.argv[1], fs.constants.O_RDWR | fs.constants.O_NONBLOCK);
      let bytes = 0;
      try { bytes = fs.readSync(fd, Buffer.alloc(4096)); } catch {}
      process.stdout.write(how + ':' + bytes, () => process.exit(0));
    };
    const rescue = setTimeout(() => drain('rescued'), ${rescueMs});
    process.stdin.on('data', () => { clearTimeout(rescue); drain('clean'); });`;
  const child = spawn(process.execPath, ['-e', script, fifo], { stdio: ['pipe', 'pipe', 'inherit'] });
  const report = new Promise<string>((resolve) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.on('close', () => resolve(out));
  });
  return { child, report };
}

describe('special files', () => {
  it('refuses writing and reading a FIFO without blocking', async () => {
    const fifo = join(rootPath, 'pipe');
    execFileSync('mkfifo', [fifo]);
    // The rescue only bounds how long a broken build takes to fail; it is far above any real run.
    const watchdog = fifoWatchdog(fifo, 60_000);
    expect(attemptWrite('pipe')).toBe('SpecialFileRejected');
    expect(tagOf(resolveReadPath(readCap, 'pipe'))).toBe('SpecialFileRejected');
    // A FIFO that appears after resolving is refused at open time too (lstat first, O_NONBLOCK open).
    writeFileSync(join(rootPath, 'later'), 'x\n');
    const readPath = right(resolveReadPath(readCap, 'later'));
    const writePath = right(resolveWritePath(writeCap, 'later'));
    unlinkSync(join(rootPath, 'later'));
    execFileSync('mkfifo', [join(rootPath, 'later')]);
    expect(tagOf(readText(readCap, readPath))).toBe('SpecialFileRejected');
    expect(tagOf(writeText(writeCap, writePath, 'x'))).toBe('SpecialFileRejected');
    // Reaching this line at all means nothing blocked: had a call blocked on the FIFO, only the
    // watchdog's rescue could have freed this thread, and it would report "rescued".
    watchdog.child.stdin?.end('done\n');
    expect(await watchdog.report).toBe('clean:0');
  });

  it('refuses writing and reading a Unix socket', async () => {
    const socketPath = join(rootPath, 'sock');
    const server = createServer(() => {});
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    expect(attemptWrite('sock')).toBe('SpecialFileRejected');
    expect(tagOf(resolveReadPath(readCap, 'sock'))).toBe('SpecialFileRejected');
  });

  it('refuses a character device node', () => {
    execFileSync('mknod', [join(rootPath, 'null-device'), 'c', '1', '3']);
    expect(attemptWrite('null-device')).toBe('SpecialFileRejected');
    expect(tagOf(resolveReadPath(readCap, 'null-device'))).toBe('SpecialFileRejected');
  });
});

describe('git metadata is read-only for tools', () => {
  const gitDir = join(rootPath, '.git');
  mkdirSync(join(gitDir, 'hooks'), { recursive: true });
  writeFileSync(join(gitDir, 'config'), '[core]\n\tbare = false\n');

  it('refuses writing hooks and config directly, by case variant, via symlink, edit and diff', () => {
    expect(attemptWrite('.git/hooks/pre-commit')).toBe('ProtectedPath');
    expect(attemptWrite('.git/config')).toBe('ProtectedPath');
    expect(attemptWrite('.GIT/config')).toBe('ProtectedPath');
    expect(attemptWrite('sub/../.git/hooks/post-checkout')).toBe('ProtectedPath');
    expect(attemptWrite('vendor/lib/.git/config')).toBe('ProtectedPath');
    symlinkSync('.git/hooks', join(rootPath, 'innocent'));
    symlinkSync('.git', join(rootPath, 'also-innocent'));
    expect(attemptWrite('innocent/post-checkout')).toBe('ProtectedPath');
    expect(attemptWrite('also-innocent/config')).toBe('ProtectedPath');
    const diff = '--- /dev/null\n+++ b/.git/hooks/post-checkout\n@@ -0,0 +1,2 @@\n+#!/bin/sh\n+touch /tmp/pwned\n';
    expect(tagOf(applyUnifiedDiff(writeCap, diff))).toBe('ProtectedPath');
    const viaSymlink = diff.replace('b/.git/hooks', 'b/innocent');
    expect(tagOf(applyUnifiedDiff(writeCap, viaSymlink))).toBe('ProtectedPath');
    expect(readdirSync(join(gitDir, 'hooks'))).toEqual([]);
    expect(readFileSync(join(gitDir, 'config'), 'utf8')).toBe('[core]\n\tbare = false\n');
    // Reading git metadata is allowed.
    expect(right(readText(readCap, right(resolveReadPath(readCap, '.git/config')))).text).toContain('bare');
  });

  it('refuses replacing a linked worktree`s .git file', () => {
    const linked = join(base, 'linked');
    mkdirSync(linked);
    writeFileSync(join(linked, '.git'), 'gitdir: /somewhere/else\n');
    const linkedCap = right(FsWriteCap.grant(right(WorktreeRoot.open(linked)), 'redteam'));
    expect(tagOf(resolveWritePath(linkedCap, '.git'))).toBe('ProtectedPath');
    expect(readFileSync(join(linked, '.git'), 'utf8')).toBe('gitdir: /somewhere/else\n');
  });

  it('does not let an edit reach git config through a symlink', () => {
    expect(tagOf(resolveWritePath(writeCap, 'also-innocent/config'))).toBe('ProtectedPath');
    const harmless = right(resolveWritePath(writeCap, 'notes.txt'));
    right(writeText(writeCap, harmless, 'bare = false\n'));
    right(editText(writeCap, harmless, { oldText: 'false', newText: 'true', startLine: 1 }));
    expect(readFileSync(join(gitDir, 'config'), 'utf8')).toBe('[core]\n\tbare = false\n');
  });
});

describe('permissions and executables', () => {
  it('does not turn a write into a setuid file', () => {
    writeFileSync(join(rootPath, 'suid'), 'x');
    chmodSync(join(rootPath, 'suid'), 0o4755);
    right(writeText(writeCap, right(resolveWritePath(writeCap, 'suid')), 'y'));
    expect(statSync(join(rootPath, 'suid')).mode & 0o7777).toBe(0o755);
  });
});
