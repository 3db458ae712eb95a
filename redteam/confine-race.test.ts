/**
 * Red team: a concurrently running process (standing in for a sandboxed
 * command that can write only inside the worktree) flips a directory and a
 * file to symlinks pointing outside, in a tight loop, while the host performs
 * thousands of confined writes into them. Not one file may ever appear
 * outside the root, and the file outside must never change.
 *
 * "Ever" is checked with inotify (fs.watch) on the outside directory for the
 * whole run, not only by looking at the end.
 *
 * No timing windows: the host keeps writing until the race has demonstrably
 * happened (the flipper reported enough flips, and writes were both accepted
 * and refused), and the watcher is drained with a sentinel file, whose event
 * arrives after every earlier one, instead of a sleep.
 */
import { spawn } from 'node:child_process';
import {
  type FSWatcher,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  watch,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsWriteCap, resolveWritePath, WorktreeRoot, writeText } from '@crustcore/confine';
import type { Result } from '@crustcore/kernel';
import { afterAll, describe, expect, it } from 'vitest';

const base = mkdtempSync(join(tmpdir(), 'redteam-race-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function right<E, A>(result: Result<E, A>): A {
  if (result._tag === 'Left') throw new Error(`expected Right, got ${JSON.stringify(result.left)}`);
  return result.right;
}

/**
 * The flipper: until killed, repeatedly turns `root/d` from a directory into
 * a symlink to `outside` and back, and `root/d/target.txt` (inside the real
 * directory) from a file into a symlink to the victim and back. After every
 * batch it prints "flips N" (the running total), so the host can tell the
 * race is happening without timing it.
 */
const FLIPPER = `
const fs = require('node:fs');
const [root, outside, victim, linkPauseText, dirPauseText] = process.argv.slice(1);
const sleeper = new Int32Array(new SharedArrayBuffer(4));
// Holds the current state for a random time up to maxMs (0: flip at full speed).
const pause = (maxMs) => { if (maxMs > 0) Atomics.wait(sleeper, 0, 0, Math.random() * maxMs); };
const d = root + '/d', stash = root + '/stash', link = root + '/d.link', target = d + '/target.txt';
const attempt = (step) => { try { step(); return true; } catch { return false; } };
let flips = 0;
process.stdout.write('ready\\n');
function spin() {
  for (let batch = 0; batch < 20; batch += 1) {
    // The file inside the real directory becomes a symlink to the victim...
    attempt(() => fs.rmSync(target, { force: true }));
    attempt(() => fs.symlinkSync(victim, target));
    // ...then the directory itself becomes a symlink to the outside directory...
    const stashed = attempt(() => fs.renameSync(d, stash));
    attempt(() => fs.symlinkSync(outside, link));
    const linked = attempt(() => fs.renameSync(link, d));
    attempt(() => fs.unlinkSync(link));
    pause(Number(linkPauseText));
    // ...and back to the real directory with a regular file.
    attempt(() => { if (fs.lstatSync(d).isSymbolicLink()) fs.unlinkSync(d); });
    attempt(() => fs.renameSync(stash, d));
    attempt(() => { if (fs.lstatSync(target).isSymbolicLink()) fs.unlinkSync(target); });
    if (stashed && linked) flips += 1;
    pause(Number(dirPauseText));
  }
  process.stdout.write('flips ' + flips + '\\n');
  setImmediate(spin);
}
spin();
`;

interface RaceSetup {
  /** At least this many writes; more until the race has shown both outcomes and minFlips flips. */
  readonly writes: number;
  readonly durable: boolean;
  /** Longest time the flipper holds the symlink state, and the directory state (ms). */
  readonly linkPauseMs: number;
  readonly dirPauseMs: number;
  readonly minFlips: number;
}

async function race(name: string, setup: RaceSetup): Promise<void> {
  const { writes, durable } = setup;
  const rootPath = join(base, name, 'root');
  const outside = join(base, name, 'outside');
  mkdirSync(join(rootPath, 'd'), { recursive: true });
  mkdirSync(outside, { recursive: true });
  const victim = join(outside, 'victim.txt');
  writeFileSync(victim, 'victim\n');
  const cap = right(FsWriteCap.grant(right(WorktreeRoot.open(rootPath)), 'race'));

  const outsideEvents: string[] = [];
  const watcher: FSWatcher = watch(outside, (event, name) => outsideEvents.push(`${event}:${name}`));

  const flipper = spawn(
    process.execPath,
    ['-e', FLIPPER, rootPath, outside, victim, String(setup.linkPauseMs), String(setup.dirPauseMs)],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let output = '';
  let ready = false;
  let reportedFlips = 0;
  flipper.stdout?.on('data', (chunk: Buffer) => {
    // Keep only the unfinished last line; every complete "flips N" line updates the running total.
    output += chunk.toString();
    const lines = output.split('\n');
    output = lines.pop() ?? '';
    for (const line of lines) {
      if (line === 'ready') ready = true;
      const match = /^flips (\d+)$/.exec(line);
      if (match !== null) reportedFlips = Number(match[1]);
    }
  });
  await new Promise<void>((resolve) => {
    const check = (): void => (ready ? resolve() : void setImmediate(check));
    check();
  });

  const outcomes = new Map<string, number>();
  const count = (tag: string): void => void outcomes.set(tag, (outcomes.get(tag) ?? 0) + 1);
  const flipsSoFar = (): number => reportedFlips;
  const raced = (): boolean => {
    const written = outcomes.get('written') ?? 0;
    return flipsSoFar() >= setup.minFlips && written > 0 && [...outcomes.values()].reduce((a, b) => a + b, 0) > written;
  };
  // A bound on count, not time: far beyond what the race needs, it only turns a hang into a failure.
  const maxWrites = writes * 200;
  for (let index = 0; index < maxWrites && (index < writes || !raced()); index += 1) {
    // Alternate between new files in the flipping directory and the flipping file itself.
    const input = index % 3 === 0 ? 'd/target.txt' : `d/file-${index % 40}.txt`;
    const path = resolveWritePath(cap, input);
    if (path._tag === 'Left') {
      count(`resolve:${path.left._tag}`);
      continue;
    }
    // No parent creation: only the flipper decides what `d` is.
    const written = writeText(cap, path.right, `write ${index}\n`, { createParents: false, durable });
    count(written._tag === 'Right' ? 'written' : `write:${written.left._tag}`);
    // Let the flipper's stdout and the watcher run now and then (they live on this event loop).
    if (index % (durable ? 10 : 250) === 0) await new Promise((resolve) => setImmediate(resolve));
  }

  const closed = new Promise<void>((resolve) => flipper.on('close', () => resolve()));
  flipper.kill('SIGTERM');
  await closed;
  const flips = flipsSoFar();
  // Drain the watcher: inotify delivers in order, so once the sentinel's event is seen, every
  // event of the run has been delivered too.
  const sentinel = 'zz-sentinel';
  const drained = new Promise<void>((resolve) => {
    const seen = (): void =>
      outsideEvents.some((e) => e.endsWith(`:${sentinel}`)) ? resolve() : void setImmediate(seen);
    seen();
  });
  writeFileSync(join(outside, sentinel), 'sentinel\n');
  await drained;
  watcher.close();
  rmSync(join(outside, sentinel));
  const runEvents = outsideEvents.filter((e) => !e.endsWith(`:${sentinel}`));
  const summary = Object.fromEntries(outcomes);
  // The race really happened: many flips, and both successful and refused writes.
  expect(flips, JSON.stringify(summary)).toBeGreaterThanOrEqual(setup.minFlips);
  expect(outcomes.get('written') ?? 0, JSON.stringify(summary)).toBeGreaterThan(0);
  // Refused writes: every attempt that did not end written (the loop may go past `writes` until some did).
  const attempts = [...outcomes.values()].reduce((a, b) => a + b, 0);
  expect(attempts - (outcomes.get('written') ?? 0), JSON.stringify(summary)).toBeGreaterThan(0);
  // And nothing ever appeared outside, nor did the victim change.
  expect(runEvents, JSON.stringify(summary)).toEqual([]);
  expect(readdirSync(outside)).toEqual(['victim.txt']);
  expect(readFileSync(victim, 'utf8')).toBe('victim\n');
  // No temp files were left behind in the real directory.
  const leftovers = readdirSync(join(rootPath, readdirSync(rootPath).includes('d') ? 'd' : 'stash')).filter((name) =>
    name.endsWith('.crustcore-tmp'),
  );
  expect(leftovers).toEqual([]);
}

describe('symlink-swap race against confined writes', () => {
  // fsync costs 5-15 ms on the shared CI disk; the confinement checks are identical with and without it,
  // so the long run skips fsync against a flipper at full speed, and a shorter run exercises the fully
  // durable path against a flipper that holds the directory for a random 0-30 ms (so some writes fit).
  it('keeps every one of 3,000+ writes inside the root', async () => {
    await race('fast', { writes: 3000, durable: false, linkPauseMs: 0, dirPauseMs: 0, minFlips: 100 });
  });

  it('keeps every one of 200+ durable (fsynced) writes inside the root', async () => {
    // The writes go on until a handful of flips and both refused and accepted writes were seen.
    await race('durable', { writes: 200, durable: true, linkPauseMs: 2, dirPauseMs: 30, minFlips: 4 });
  });
});
