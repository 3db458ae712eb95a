/**
 * Crash safety of the apply journal under SIGKILL.
 *
 * The journal module is bundled once with esbuild into a plain .mjs; each
 * trial spawns `node` on it to apply a 50-file batch and kills it — at a
 * random journal step (the child SIGKILLs itself there), halfway through
 * writing a temp file, or after a random delay from the parent. Recovery then
 * runs (sometimes itself killed first and re-run). After every trial the tree
 * must be byte-identical to all-old or all-new — matching the journal's final
 * state — with no temp files left, and a further recovery must change nothing.
 *
 * Trees live on tmpfs when available: a process kill never loses the page
 * cache, so fsync cost would only slow the trials without testing more.
 * CRUSTCORE_NIGHTLY=1 runs 10,000 random trials instead of 80 and a 50-file batch
 * instead of 24 (every step is also killed deterministically in the two tests before
 * the random ones). 24 files are three rounds of the fixture's eight kinds of change,
 * so every kind is in the batch; the CI run pays one node start per kill point.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyChanges, readJournal, recoverJournals } from '../packages/verify/src/index.js';
import {
  changesBetween,
  expectedSnapshot,
  makeBatch,
  snapshot,
  type Tree,
  writeTree,
} from '../packages/verify/test/journal-fixture.js';

const NIGHTLY = process.env.CRUSTCORE_NIGHTLY === '1';
const RANDOM_TRIALS = NIGHTLY ? 10_000 : 80;
const PARALLEL = 2;
const FILES = NIGHTLY ? 50 : 24;

const CHILD_SOURCE = `
import { readFileSync } from 'node:fs';
import { applyChanges, recoverJournals } from './journal/apply-journal.ts';
const job = JSON.parse(process.argv[2]);
let steps = 0;
const onStep = () => {
  steps += 1;
  if (steps === job.killAt) process.kill(process.pid, 'SIGKILL');
};
if (job.mode === 'apply') {
  const batch = JSON.parse(readFileSync(job.batchFile, 'utf8'));
  const changes = batch.map((c) => ({
    path: c.path,
    before: c.before,
    after: c.after === null ? null : { bytes: Buffer.from(c.after.b64, 'base64'), mode: c.after.mode },
  }));
  process.stdout.write('go\\n');
  const result = applyChanges(changes, { root: job.root, journalRoot: job.journalRoot, journalId: job.journalId, onStep });
  process.stdout.write(JSON.stringify({ tag: result._tag, steps }) + '\\n');
} else {
  const result = recoverJournals({ journalRoot: job.journalRoot, onStep });
  process.stdout.write(JSON.stringify({ tag: result._tag, steps }) + '\\n');
}
`;

const base = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'cc-crash-'));
const bundle = join(base, 'journal-child.mjs');
const batchFile = join(base, 'batch.json');
const { oldTree, newTree } = makeBatch(FILES);
const changes = changesBetween(oldTree, newTree);
let oldSnapshot: Map<string, string>;
let newFiles: Map<string, string>;
let applySteps = 0;

// A child without the CA-bundle variable starts ~40 ms faster; it needs nothing else.
const childEnv: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

const filesOnly = (snap: Map<string, string>): Map<string, string> =>
  new Map([...snap].filter(([, value]) => value !== 'dir'));

interface ChildOutcome {
  readonly signal: NodeJS.Signals | null;
  readonly code: number | null;
  readonly stdout: string;
}

function runChild(job: Record<string, unknown>, killAfterGoMs?: number): Promise<ChildOutcome> {
  return new Promise((resolveOutcome, reject) => {
    const child: ChildProcess = spawn(process.execPath, [bundle, JSON.stringify(job)], {
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      const first = stdout === '';
      stdout += chunk.toString();
      if (first && killAfterGoMs !== undefined) setTimeout(() => child.kill('SIGKILL'), killAfterGoMs);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code !== 0 && signal === null) reject(new Error(`child failed (${code}): ${stderr}`));
      else resolveOutcome({ code, signal, stdout });
    });
  });
}

function listTempFiles(root: string): string[] {
  return [...snapshot(root).keys()].filter((path) => /(^|\/)\.crustcore-/.test(path));
}

/**
 * Start-up recovery skips a journal with an `.ended` marker, so a marker beside a journal that
 * is not durably APPLIED or ROLLED_BACK would leave a half-applied tree for good. Checked at
 * every kill point, before recovery runs and after.
 */
function expectMarkersOnlyOnEnded(journalRoot: string): void {
  for (const marker of readdirSync(journalRoot).filter((name) => name.endsWith('.ended'))) {
    const state = readJournal(join(journalRoot, marker.slice(0, -'.ended'.length)))?.state;
    expect([marker, state]).toEqual([marker, expect.stringMatching(/^(APPLIED|ROLLED_BACK)$/)]);
  }
}

/** Checks one finished trial and returns which side it landed on; `again` also re-runs recovery. */
function checkTree(root: string, journalRoot: string, again = true): 'old' | 'new' {
  expectMarkersOnlyOnEnded(journalRoot);
  const journals = readdirSync(journalRoot).filter((name) => !name.startsWith('.') && !name.endsWith('.ended'));
  expect(journals.length).toBeLessThanOrEqual(1);
  const state = journals[0] === undefined ? null : (readJournal(join(journalRoot, journals[0]))?.state ?? 'UNREADABLE');
  expect(listTempFiles(root)).toEqual([]);
  expect(readdirSync(journalRoot).filter((name) => name.startsWith('.'))).toEqual([]);
  const now = snapshot(root);
  if (state === 'APPLIED') {
    expect(filesOnly(now)).toEqual(newFiles);
  } else {
    expect(state === null || state === 'ROLLED_BACK').toBe(true);
    expect(now).toEqual(oldSnapshot);
  }
  if (again) {
    // Recovery again changes nothing.
    const rerun = recoverJournals({ journalRoot });
    expect(rerun._tag === 'Right' && rerun.right.every((r) => r.action === 'none')).toBe(true);
    expect(snapshot(root)).toEqual(now);
  }
  return state === 'APPLIED' ? 'new' : 'old';
}

function resetSlot(slot: string): { root: string; journalRoot: string } {
  const root = join(slot, 'tree');
  const journalRoot = join(slot, 'journal');
  writeTree(root, oldTree);
  rmSync(journalRoot, { recursive: true, force: true });
  mkdirSync(journalRoot, { recursive: true });
  return { root, journalRoot };
}

/** Counts the recovery steps after an apply killed at `applyKillAt`, leaving that crashed state in place. */
async function crashAt(slot: string, applyKillAt: number): Promise<{ root: string; journalRoot: string }> {
  const paths = resetSlot(slot);
  await runChild({ mode: 'apply', batchFile, ...paths, journalId: 'j1', killAt: applyKillAt });
  return paths;
}

/** Copies a crashed tree and its journal to `slot`, pointing the journal at the copy. */
function copyCrashed(from: { root: string; journalRoot: string }, slot: string): { root: string; journalRoot: string } {
  const root = join(slot, 'tree');
  const journalRoot = join(slot, 'journal');
  rmSync(slot, { recursive: true, force: true });
  cpSync(from.root, root, { recursive: true, verbatimSymlinks: true });
  cpSync(from.journalRoot, journalRoot, { recursive: true });
  const file = join(journalRoot, 'j1', 'journal.json');
  const record = JSON.parse(readFileSync(file, 'utf8')) as { root: string };
  writeFileSync(file, JSON.stringify({ ...record, root }));
  return { root, journalRoot };
}

beforeAll(async () => {
  await build({
    stdin: {
      contents: CHILD_SOURCE,
      resolveDir: resolve(dirname(fileURLToPath(import.meta.url)), '../packages/verify/src'),
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: bundle,
    conditions: ['source'],
    mainFields: ['module', 'main'],
    logLevel: 'silent',
  });
  writeFileSync(
    batchFile,
    JSON.stringify(
      changes.map((c) => ({
        path: c.path,
        before: c.before,
        after: c.after === null ? null : { b64: Buffer.from(c.after.bytes).toString('base64'), mode: c.after.mode },
      })),
    ),
  );
  oldSnapshot = expectedSnapshot(oldTree as Tree, join(base, 'expect-old'));
  newFiles = filesOnly(expectedSnapshot(newTree as Tree, join(base, 'expect-new')));
  // Count the steps of one uninterrupted apply, in process.
  const dry = resetSlot(join(base, 'dry'));
  const result = applyChanges(changes, { ...dry, journalId: 'j1', onStep: () => (applySteps += 1) });
  expect(result._tag).toBe('Right');
  expect(filesOnly(snapshot(dry.root))).toEqual(newFiles);
  expect(applySteps).toBeGreaterThan(2 * FILES);
}, 60_000);

afterAll(() => {
  rmSync(base, { recursive: true, force: true });
});

describe('apply journal under SIGKILL', () => {
  it('every journal step: a kill there, then recovery, leaves all-old or all-new', async () => {
    const seen = { old: 0, new: 0 };
    const points = Array.from({ length: applySteps + 1 }, (_, i) => i + 1);
    const slots = Array.from({ length: PARALLEL }, (_, i) => join(base, `every-${i}`));
    const work = async (slot: string): Promise<void> => {
      for (let killAt = points.shift(); killAt !== undefined; killAt = points.shift()) {
        const { root, journalRoot } = await crashAt(slot, killAt);
        expectMarkersOnlyOnEnded(journalRoot);
        const recovered = recoverJournals({ journalRoot });
        expect(recovered._tag).toBe('Right');
        const side = checkTree(root, journalRoot);
        seen[side] += 1;
        // The last step is the APPLIED commit point; only kills after it keep the new tree.
        expect(side).toBe(killAt >= applySteps ? 'new' : 'old');
      }
    };
    await Promise.all(slots.map(work));
    expect(seen.old + seen.new).toBe(applySteps + 1);
  }, 600_000);

  it('every recovery step: recovery killed there and re-run gives the same all-old tree', async () => {
    // Crash in the middle of the batch, count the recovery steps on a throwaway copy.
    const middle = Math.floor(applySteps / 2);
    const probe = await crashAt(join(base, 'probe'), middle);
    let recoverySteps = 0;
    recoverJournals({ journalRoot: probe.journalRoot, onStep: () => (recoverySteps += 1) });
    expect(recoverySteps).toBeGreaterThan(FILES);
    const points = Array.from({ length: recoverySteps }, (_, i) => i + 1);
    const slots = Array.from({ length: PARALLEL }, (_, i) => join(base, `recover-${i}`));
    // Crash once more and keep that state as a template each step copies (with the journal's root rewritten).
    const template = await crashAt(join(base, 'template'), middle);
    const work = async (slot: string): Promise<void> => {
      for (let killAt = points.shift(); killAt !== undefined; killAt = points.shift()) {
        const { root, journalRoot } = copyCrashed(template, slot);
        const killed = await runChild({ mode: 'recover', journalRoot, killAt });
        expect(killed.signal).toBe('SIGKILL');
        expectMarkersOnlyOnEnded(journalRoot);
        const rerun = recoverJournals({ journalRoot });
        expect(rerun._tag).toBe('Right');
        expect(checkTree(root, journalRoot)).toBe('old');
      }
    };
    await Promise.all(slots.map(work));
  }, 600_000);

  it(`${RANDOM_TRIALS} random kills (step, mid-write, timer; some recoveries killed too)`, async () => {
    let seed = 0x5eed;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const seen = { old: 0, new: 0, killed: 0 };
    let remaining = RANDOM_TRIALS;
    const slots = Array.from({ length: PARALLEL }, (_, i) => join(base, `random-${i}`));
    const work = async (slot: string): Promise<void> => {
      while (remaining > 0) {
        remaining -= 1;
        const paths = resetSlot(slot);
        const byTimer = random() < 0.25;
        const killAt = 1 + Math.floor(random() * (applySteps + 2));
        const outcome = byTimer
          ? await runChild(
              { mode: 'apply', batchFile, ...paths, journalId: 'j1', killAt: -1 },
              Math.floor(random() * 6),
            )
          : await runChild({ mode: 'apply', batchFile, ...paths, journalId: 'j1', killAt });
        if (outcome.signal === 'SIGKILL') seen.killed += 1;
        if (random() < 0.1) {
          await runChild({
            mode: 'recover',
            journalRoot: paths.journalRoot,
            killAt: 1 + Math.floor(random() * 3 * FILES),
          });
        }
        expectMarkersOnlyOnEnded(paths.journalRoot);
        const recovered = recoverJournals({ journalRoot: paths.journalRoot });
        expect(recovered._tag).toBe('Right');
        // Idempotence is checked on every tenth trial (and at every step in the tests above).
        seen[checkTree(paths.root, paths.journalRoot, remaining % 10 === 0)] += 1;
      }
    };
    await Promise.all(slots.map(work));
    expect(seen.old + seen.new).toBe(RANDOM_TRIALS);
    // The trials must land on both sides and mostly be real kills, or they tested nothing.
    expect(seen.old).toBeGreaterThan(RANDOM_TRIALS / 10);
    expect(seen.new).toBeGreaterThan(0);
    expect(seen.killed).toBeGreaterThan(RANDOM_TRIALS / 2);
  }, 600_000);
});
