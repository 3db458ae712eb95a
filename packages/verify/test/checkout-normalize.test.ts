/**
 * checkout-normalize on a real tree, with both stat passes (`find`, and the
 * in-process walk used when find cannot run): each brings modes and hard
 * links back to what a checkout makes, leaves a symlink's target alone, and
 * refuses (false) a tree holding what no checkout holds (a FIFO) or what it
 * cannot read. The two passes must agree on every case.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { normalizeCheckout } from '../src/checkout-normalize.js';

const UMASK = 0o022;
const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) {
    execFileSync('chmod', ['-R', 'u+rwx', root]);
    rmSync(root, { recursive: true, force: true });
  }
});

function tree(): { root: string; outside: string } {
  const root = mkdtempSync(join(tmpdir(), 'crustcore-normalize-'));
  roots.push(root);
  mkdirSync(join(root, 'src/deep'), { recursive: true });
  writeFileSync(join(root, 'src/math.js'), 'math\n');
  writeFileSync(join(root, 'src/deep/run.sh'), '#!/bin/sh\n');
  writeFileSync(join(root, 'a.txt'), 'same\n');
  const outside = join(root, '..', `${root.split('/').pop()}-outside`);
  writeFileSync(outside, 'outside\n');
  chmodSync(outside, 0o4600);
  roots.push(outside);
  return { root, outside };
}

/** What a previous run can leave behind that git does not track. */
function plant(root: string, outside: string): void {
  chmodSync(join(root, 'src'), 0o2777);
  chmodSync(join(root, 'src/deep'), 0o700);
  chmodSync(join(root, 'src/math.js'), 0o4666);
  writeFileSync(join(root, 'src/setuid.sh'), '#!/bin/sh\n');
  chmodSync(join(root, 'src/setuid.sh'), 0o6777);
  chmodSync(join(root, 'a.txt'), 0o600);
  linkSync(join(root, 'a.txt'), join(root, 'b.txt'));
  // A link at the right mode: only its link count gives it away.
  linkSync(join(root, 'src/deep/run.sh'), join(root, 'src/run-too.sh'));
  chmodSync(join(root, 'src/deep/run.sh'), 0o755);
  symlinkSync(outside, join(root, 'src/link'));
}

const modeOf = (path: string): number => statSync(path).mode & 0o7777;

describe.each(['find', 'walk'] as const)('normalizeCheckout (%s)', (scan) => {
  it('brings modes and hard links back to what a checkout makes', async () => {
    const { root, outside } = tree();
    plant(root, outside);
    expect(await normalizeCheckout(root, { umask: UMASK, scan })).toBe(true);
    expect(modeOf(join(root, 'src'))).toBe(0o755);
    expect(modeOf(join(root, 'src/deep'))).toBe(0o755);
    expect(modeOf(join(root, 'src/math.js'))).toBe(0o644);
    expect(modeOf(join(root, 'src/deep/run.sh'))).toBe(0o755);
    expect(statSync(join(root, 'src/deep/run.sh')).nlink).toBe(1);
    expect(modeOf(join(root, 'src/run-too.sh'))).toBe(0o755);
    expect(modeOf(join(root, 'src/setuid.sh'))).toBe(0o755);
    expect(modeOf(join(root, 'a.txt'))).toBe(0o644);
    expect(statSync(join(root, 'a.txt')).nlink).toBe(1);
    expect(statSync(join(root, 'b.txt')).ino).not.toBe(statSync(join(root, 'a.txt')).ino);
    expect(readFileSync(join(root, 'b.txt'), 'utf8')).toBe('same\n');
    // The symlink is never followed: what it points at keeps its mode.
    expect(modeOf(outside)).toBe(0o4600);
  });

  it('leaves a tree that is already clean as it is', async () => {
    const { root } = tree();
    const before = statSync(join(root, 'src/math.js')).ctimeMs;
    expect(await normalizeCheckout(root, { umask: UMASK, scan })).toBe(true);
    expect(statSync(join(root, 'src/math.js')).ctimeMs).toBe(before);
  });

  it('refuses a tree holding a FIFO', async () => {
    const { root } = tree();
    execFileSync('mkfifo', [join(root, 'src/deep/pipe')]);
    expect(await normalizeCheckout(root, { umask: UMASK, scan })).toBe(false);
  });

  it('refuses a tree with a directory it cannot read', async () => {
    if (process.getuid?.() === 0) {
      // root reads a 0000 directory anyway; a directory without search permission for root does not
      // exist, so the check is that normalization then fixes it (it is a mode like any other).
      const { root } = tree();
      chmodSync(join(root, 'src/deep'), 0o000);
      expect(await normalizeCheckout(root, { umask: UMASK, scan })).toBe(true);
      expect(modeOf(join(root, 'src/deep'))).toBe(0o755);
      return;
    }
    const { root } = tree();
    chmodSync(join(root, 'src/deep'), 0o000);
    expect(await normalizeCheckout(root, { umask: UMASK, scan })).toBe(false);
  });
});
