/**
 * `crustcore backup` / `restore` at the module level (the CLI round trip with
 * real runs and a real daemon is golden/backup.test.ts). Restore reads an
 * untrusted archive, so each attack is a crafted archive — made with the real
 * encoder, so only the manifest lies — and each has a CONTROL: a careless
 * extractor (mkdir -p, write through the joined path, make the symlink) given
 * the same entries really does write outside the home, so a refusal cannot
 * pass vacuously. The attacks vary names, layouts and encodings.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { acquireLock } from '@crustcore/ledger';
import { DataDirLock } from '@crustcore/state';
import { describe, expect, it } from 'vitest';
import { encodeArchive } from '../src/backup/container.js';
import { ARCHIVE_FORMAT, ARCHIVE_VERSION, type Manifest } from '../src/backup/manifest.js';
import { restoreBackup } from '../src/backup/restore.js';
import { takeBackup } from '../src/backup/take.js';

const scratch = (): string => realpathSync(mkdtempSync(join(tmpdir(), 'crustcore-backup-')));
const sha = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

/** Every path under `dir` with its kind, permission bits and content (or link target). */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (at: string, rel: string): void => {
    for (const name of readdirSync(at).sort()) {
      const path = join(at, name);
      const key = rel === '' ? name : `${rel}/${name}`;
      const info = lstatSync(path);
      const mode = (info.mode & 0o777).toString(8);
      if (info.isSymbolicLink()) out[key] = `link ${readlinkSync(path)}`;
      else if (info.isDirectory()) {
        out[key] = `dir ${mode}`;
        visit(path, key);
      } else if (info.isFile()) out[key] = `file ${mode} ${sha(readFileSync(path))}`;
      else out[key] = 'special';
    }
  };
  visit(dir, '');
  return out;
}

function sampleHome(root: string): string {
  const home = join(root, 'home');
  const project = join(home, 'projects', 'r1');
  mkdirSync(join(project, 'artifacts', 'ab'), { recursive: true });
  writeFileSync(join(home, 'receipt.key'), 'k'.repeat(64), { mode: 0o600 });
  writeFileSync(join(home, 'vault'), Buffer.from([0, 1, 2, 255, 254]), { mode: 0o600 });
  writeFileSync(join(project, 'events.log'), Buffer.alloc(4096, 7));
  writeFileSync(join(project, 'events.head'), 'head\n');
  writeFileSync(join(project, 'artifacts', 'ab', 'empty'), '');
  chmodSync(join(project, 'artifacts'), 0o700);
  symlinkSync('r1', join(home, 'projects', 'latest'));
  mkdirSync(join(home, 'daemon', 'pglite'), { recursive: true });
  writeFileSync(join(home, 'daemon', 'pglite', 'PG_VERSION'), '18\n');
  mkdirSync(join(home, 'worktrees', 'r1', 't_1'), { recursive: true });
  writeFileSync(join(home, 'worktrees', 'r1', 't_1', 'x.js'), 'disposable');
  return home;
}

describe('backup and restore round trip', () => {
  it('restores every kept file, directory, mode and internal symlink; leaves out what is disposable or live', async () => {
    const root = scratch();
    const home = sampleHome(root);
    execFileSync('mkfifo', [join(home, 'daemon', 'a-fifo')]);
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(join(home, 'daemon', 'admin.sock'), resolve));
    writeFileSync(join(home, 'projects', 'r1', 'events.log.lock'), '999999\n');
    try {
      const taken = takeBackup(home, join(root, 'b.ccb'));
      expect(taken._tag).toBe('Right');
      if (taken._tag !== 'Right') return;
      expect(lstatSync(join(root, 'b.ccb')).mode & 0o777).toBe(0o600);
      expect(taken.right.excluded).toEqual(
        expect.arrayContaining([
          'worktrees/ (disposable)',
          'daemon/admin.sock (a socket)',
          'daemon/a-fifo (not a regular file)',
          'projects/r1/events.log.lock (a lock)',
        ]),
      );
      const restored = restoreBackup(join(root, 'b.ccb'), join(root, 'fresh'), false);
      expect(restored).toMatchObject({ _tag: 'Right', right: { previousHome: null } });
      const expected = tree(home);
      for (const key of Object.keys(expected))
        if (/^worktrees|admin\.sock$|a-fifo$|\.lock$/.test(key)) delete expected[key];
      expect(tree(join(root, 'fresh'))).toEqual(expected);
      expect(tree(join(root, 'fresh'))['receipt.key']).toMatch(/^file 600 /);
    } finally {
      server.close();
    }
  });

  it('refuses a non-empty home without force; with force moves it aside intact', () => {
    const root = scratch();
    const home = sampleHome(root);
    expect(takeBackup(home, join(root, 'b.ccb'))._tag).toBe('Right');
    const target = join(root, 'target');
    mkdirSync(target);
    writeFileSync(join(target, 'mine.txt'), 'keep me');
    expect(restoreBackup(join(root, 'b.ccb'), target, false)).toMatchObject({
      _tag: 'Left',
      left: { _tag: 'HomeNotEmpty' },
    });
    expect(readdirSync(target)).toEqual(['mine.txt']);
    const forced = restoreBackup(join(root, 'b.ccb'), target, true);
    expect(forced).toMatchObject({ _tag: 'Right', right: { previousHome: `${target}.before-restore-1` } });
    expect(readFileSync(join(`${target}.before-restore-1`, 'mine.txt'), 'utf8')).toBe('keep me');
    expect(existsSync(join(target, 'receipt.key'))).toBe(true);
    // An empty directory is an empty home: no force needed.
    mkdirSync(join(root, 'empty'));
    expect(restoreBackup(join(root, 'b.ccb'), join(root, 'empty'), false)._tag).toBe('Right');
  });

  it('never overwrites an archive, nor writes one inside the home it archives', () => {
    const root = scratch();
    const home = sampleHome(root);
    writeFileSync(join(root, 'taken.ccb'), 'precious');
    expect(takeBackup(home, join(root, 'taken.ccb'))).toMatchObject({ _tag: 'Left', left: { _tag: 'OutExists' } });
    expect(readFileSync(join(root, 'taken.ccb'), 'utf8')).toBe('precious');
    expect(takeBackup(home, join(home, 'projects', 'b.ccb'))).toMatchObject({
      _tag: 'Left',
      left: { _tag: 'OutInsideHome' },
    });
  });
  it('a home that is a symlink is archived as the directory it names; a file in the home’s place is not empty', () => {
    const root = scratch();
    const real = sampleHome(root);
    symlinkSync(real, join(root, 'linked-home'));
    const taken = takeBackup(join(root, 'linked-home'), join(root, 'b.ccb'));
    expect(taken).toMatchObject({ _tag: 'Right', right: { files: 6 } });
    writeFileSync(join(root, 'not-a-dir'), 'x');
    expect(restoreBackup(join(root, 'b.ccb'), join(root, 'not-a-dir'), false)).toMatchObject({
      _tag: 'Left',
      left: { _tag: 'HomeNotEmpty' },
    });
    // The archive's own directory reached through a link into the home is still inside the home.
    symlinkSync(join(real, 'projects'), join(root, 'into-home'));
    expect(takeBackup(real, join(root, 'into-home', 'c.ccb'))).toMatchObject({ left: { _tag: 'OutInsideHome' } });
  });
});

describe('backup takes the writers’ locks', () => {
  it('refuses while a live process holds an embedded database, naming it; backs up once it lets go (control)', () => {
    const root = scratch();
    const home = sampleHome(root);
    const held = DataDirLock.acquire(join(home, 'daemon', 'pglite'));
    if (held._tag !== 'Right') throw new Error('could not take the lock for the test');
    const refused = takeBackup(home, join(root, 'b.ccb'));
    expect(refused).toMatchObject({ _tag: 'Left', left: { _tag: 'StateInUse', path: join(home, 'daemon', 'pglite') } });
    if (refused._tag === 'Left' && refused.left._tag === 'StateInUse')
      expect(refused.left.holder).toContain(`pid ${process.pid}`);
    expect(existsSync(join(root, 'b.ccb'))).toBe(false);
    held.right.release();
    expect(takeBackup(home, join(root, 'b.ccb'))._tag).toBe('Right');
    // Backup released what it took: the database can be opened again.
    const again = DataDirLock.acquire(join(home, 'daemon', 'pglite'));
    expect(again._tag).toBe('Right');
    if (again._tag === 'Right') again.right.release();
  });

  it('refuses while a ledger writer holds a log; a lock left by a dead process is taken over', () => {
    const root = scratch();
    const home = sampleHome(root);
    const log = join(home, 'projects', 'r1', 'events.log');
    const writer = acquireLock(`${log}.lock`);
    if (writer._tag !== 'Right') throw new Error('could not take the ledger lock for the test');
    expect(takeBackup(home, join(root, 'a.ccb'))).toMatchObject({
      _tag: 'Left',
      left: { _tag: 'StateInUse', path: log },
    });
    writer.right.release();
    // A crashed writer's lock (no such pid) does not block a backup.
    writeFileSync(`${log}.lock`, '2147483646\n');
    expect(takeBackup(home, join(root, 'b.ccb'))._tag).toBe('Right');
  });

  it('restore --force refuses to move aside a home whose database is held', () => {
    const root = scratch();
    const home = sampleHome(root);
    expect(takeBackup(home, join(root, 'b.ccb'))._tag).toBe('Right');
    const held = DataDirLock.acquire(join(home, 'daemon', 'pglite'));
    if (held._tag !== 'Right') throw new Error('could not take the lock for the test');
    try {
      expect(restoreBackup(join(root, 'b.ccb'), home, true)).toMatchObject({
        _tag: 'Left',
        left: { _tag: 'HomeInUse' },
      });
      expect(existsSync(`${home}.before-restore-1`)).toBe(false);
    } finally {
      held.right.release();
    }
  });
});

// ─── attacks ────────────────────────────────────────────────────────────────

type Entry = Manifest['entries'][number];
const file = (path: string, content: string): { entry: Entry; data: Buffer } => {
  const data = Buffer.from(content);
  return { entry: { path, kind: 'file', mode: 0o644, size: data.length, sha256: sha(data) }, data };
};
const dir = (path: string): { entry: Entry; data: null } => ({ entry: { path, kind: 'dir', mode: 0o755 }, data: null });
const link = (path: string, target: string): { entry: Entry; data: null } => ({
  entry: { path, kind: 'symlink', mode: 0o777, target },
  data: null,
});

function craft(root: string, parts: ReadonlyArray<{ entry: Entry; data: Buffer | null }>): string {
  const manifest: Manifest = {
    format: ARCHIVE_FORMAT,
    version: ARCHIVE_VERSION,
    entries: parts.map((p) => p.entry),
    excluded: [],
  };
  const path = join(root, 'evil.ccb');
  writeFileSync(
    path,
    encodeArchive(
      manifest,
      parts.flatMap((p) => (p.data === null ? [] : [p.data])),
    ),
  );
  return path;
}

/** What a careless extractor does: join, mkdir -p, write or link. The CONTROL for every attack. */
function naiveExtract(home: string, parts: ReadonlyArray<{ entry: Entry; data: Buffer | null }>): void {
  for (const { entry, data } of parts) {
    const path = entry.path.startsWith('/') ? entry.path : join(home, entry.path.replace(/\\/g, '/'));
    if (entry.kind === 'dir') mkdirSync(path, { recursive: true });
    else if (entry.kind === 'symlink') {
      mkdirSync(dirname(path), { recursive: true });
      symlinkSync(entry.target ?? '', path);
    } else if (entry.kind === 'file') {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, data ?? '');
    }
  }
}

/** Each attack writes (or links) `marker` outside `<root>/home`, at a name built from `out` (the outside directory). */
const ATTACKS: ReadonlyArray<{
  name: string;
  parts: (out: string) => ReadonlyArray<{ entry: Entry; data: Buffer | null }>;
  tag: string;
}> = [
  { name: 'a ../ entry', parts: () => [file('../outside/marker', 'pwned')], tag: 'UnsafePath' },
  {
    name: 'a .. buried in a path',
    parts: () => [dir('projects'), file('projects/../../outside/marker', 'pwned')],
    tag: 'UnsafePath',
  },
  { name: 'a ./.. spelling', parts: () => [file('./../outside/marker', 'pwned')], tag: 'UnsafePath' },
  { name: 'an absolute path', parts: (out) => [file(`${out}/marker`, 'pwned')], tag: 'UnsafePath' },
  { name: 'a doubled-slash absolute path', parts: (out) => [file(`/${out}/marker`, 'pwned')], tag: 'UnsafePath' },
  { name: 'a backslash separator', parts: () => [file('..\\outside\\marker', 'pwned')], tag: 'UnsafePath' },
  {
    name: 'a symlink to an absolute directory, then a file through it',
    parts: (out) => [link('projects', out), file('projects/marker', 'pwned')],
    tag: 'SymlinkEscapes',
  },
  {
    name: 'a relative symlink climbing out, then a file through it',
    parts: () => [dir('a'), link('a/up', '../../outside'), file('a/up/marker', 'pwned')],
    tag: 'SymlinkEscapes',
  },
  {
    name: 'a symlink that leaves and comes back through the outside',
    parts: () => [link('x', '../outside/../outside'), file('x/marker', 'pwned')],
    tag: 'SymlinkEscapes',
  },
];

describe('restore refuses archives that write outside the home', () => {
  for (const attack of ATTACKS) {
    it(`${attack.name}: the careless extractor escapes (control); restore refuses and writes nothing`, () => {
      const root = scratch();
      const outside = join(root, 'outside');
      mkdirSync(outside);
      const parts = attack.parts(outside);
      // CONTROL: the same entries, extracted carelessly into a throwaway home, land outside it.
      naiveExtract(join(root, 'careless-home'), parts);
      expect(readFileSync(join(outside, 'marker'), 'utf8')).toBe('pwned');
      execFileSync('rm', ['-rf', join(outside, 'marker'), join(root, 'careless-home')]);

      const result = restoreBackup(craft(root, parts), join(root, 'home'), false);
      expect(result._tag).toBe('Left');
      if (result._tag === 'Left' && result.left._tag === 'Archive' && result.left.error._tag === 'UnsafeEntries')
        expect(result.left.error.problems.join(' ')).toMatch(/outside the home|absolute|"\.\."|backslash|parent/);
      else throw new Error(`expected UnsafeEntries (${attack.tag}), got ${JSON.stringify(result)}`);
      expect(existsSync(join(outside, 'marker'))).toBe(false);
      expect(readdirSync(root).sort()).toEqual(['evil.ccb', 'outside']);
    });
  }

  for (const kind of ['chardev', 'blockdev', 'fifo', 'socket', 'hardlink', 'FILE']) {
    it(`a ${kind} entry is refused before anything is written`, () => {
      const root = scratch();
      const parts = [file('ok.txt', 'fine'), { entry: { path: 'dev/null', kind, mode: 0o666 }, data: null }];
      const result = restoreBackup(craft(root, [dir('dev'), ...parts]), join(root, 'home'), false);
      expect(result).toMatchObject({ _tag: 'Left', left: { _tag: 'Archive', error: { _tag: 'UnsafeEntries' } } });
      expect(existsSync(join(root, 'home'))).toBe(false);
      // CONTROL: without the device entry the same archive restores.
      expect(restoreBackup(craft(root, [dir('dev'), file('ok.txt', 'fine')]), join(root, 'home'), false)._tag).toBe(
        'Right',
      );
    });
  }

  it('setuid, setgid and sticky bits are dropped; a path listed twice is refused', () => {
    const root = scratch();
    const suid = { entry: { ...file('tool', '#!/bin/sh\n').entry, mode: 0o6755 }, data: Buffer.from('#!/bin/sh\n') };
    expect(restoreBackup(craft(root, [suid]), join(root, 'home'), false)._tag).toBe('Right');
    expect(lstatSync(join(root, 'home', 'tool')).mode & 0o7777).toBe(0o755);
    const twice = craft(root, [file('a', 'one'), file('a', 'two')]);
    expect(restoreBackup(twice, join(root, 'home2'), false)).toMatchObject({ _tag: 'Left' });
  });
});

describe('restore verifies every SHA-256 before writing', () => {
  const rewrite = (path: string, edit: (raw: Buffer) => Buffer): void =>
    writeFileSync(path, gzipSync(edit(gunzipSync(readFileSync(path)))));

  it('a flipped byte, a truncated archive and trailing bytes are refused; the untouched archive restores (control)', () => {
    const root = scratch();
    const home = sampleHome(root);
    expect(takeBackup(home, join(root, 'b.ccb'))._tag).toBe('Right');
    const original = readFileSync(join(root, 'b.ccb'));
    const variants: Array<[string, (raw: Buffer) => Buffer, string]> = [
      ['flipped', (raw) => Buffer.from(raw.map((b, i) => (i === raw.length - 10 ? b ^ 1 : b))), 'ChecksumMismatch'],
      ['truncated', (raw) => raw.subarray(0, raw.length - 5), 'SizeMismatch'],
      ['trailing', (raw) => Buffer.concat([raw, Buffer.from('extra')]), 'SizeMismatch'],
    ];
    for (const [name, edit, tag] of variants) {
      writeFileSync(join(root, `${name}.ccb`), original);
      rewrite(join(root, `${name}.ccb`), edit);
      expect(restoreBackup(join(root, `${name}.ccb`), join(root, name), false), name).toMatchObject({
        _tag: 'Left',
        left: { _tag: 'Archive', error: { _tag: tag } },
      });
      expect(existsSync(join(root, name)), name).toBe(false);
    }
    writeFileSync(join(root, 'garbage.ccb'), 'not gzip at all');
    expect(restoreBackup(join(root, 'garbage.ccb'), join(root, 'g'), false)).toMatchObject({
      left: { error: { _tag: 'NotAnArchive' } },
    });
    expect(restoreBackup(join(root, 'b.ccb'), join(root, 'good'), false)._tag).toBe('Right');
  });
});
