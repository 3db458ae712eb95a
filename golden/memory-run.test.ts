/**
 * Repository memory used by `crustcore run` on its own, end to end on the
 * built CLI: a nugget added with `crustcore memory add` reaches a `--worker`
 * program as `prior_observations_untrusted` (with the repository capsule's
 * code for the goal); `--no-memory` turns it off; a repository without a
 * store gets none created; a failure and its verified fix are learned after
 * the task without `memory learn`; and a store another process holds is
 * skipped with one line while the task completes. In `crustcore chat` the
 * first request of a session gets the bundle (inside the untrusted fence of
 * the native agent's task prompt) and later requests only continue it.
 *
 * The tests that need a nugget share one repository and its store (every
 * `crustcore memory add` starts the embedded database, seconds of CPU): each
 * of them starts from the base commit's work tree, and each asserts on its
 * own task (the memory a task learned carries its task id).
 *
 * The worker (a node program outside the repository) copies the observations
 * it was given into `seen-input.json` in its worktree, so they travel in the
 * patch: applied (`--approve auto`) or kept (`crustcore diff --export`).
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DataDirLock } from '@crustcore/state';
import { beforeAll, describe, expect, it } from 'vitest';
import { registryFor, startModelServer } from './agent/model-server.js';
import { buildCli, CLI, crustcore, makeRepo, NODE_REPO, type Sandbox } from './cli-harness.js';

const NUGGET = 'Arithmetic helpers in src/math.js stay pure: no logging, no globals';

let stored: Sandbox;
beforeAll(() => {
  buildCli();
  stored = makeRepo(NODE_REPO);
  const added = crustcore(stored, ['memory', 'add', NUGGET]);
  expect(added.status, added.stderr).toBe(0);
}, 300_000);

/** The shared repository as its base commit left it (an earlier test may have applied a patch). */
function atBase(box: Sandbox): Sandbox {
  execFileSync('git', ['checkout', '-q', '--', '.'], { cwd: box.repo });
  execFileSync('git', ['clean', '-qfd'], { cwd: box.repo });
  expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toBe(NODE_REPO['src/math.js']);
  return box;
}

interface Observation {
  readonly source: string;
  readonly text: string;
}

/** The worker: records what it was given, then fixes add() (on attempt 1 of `fail-once`, breaks it differently). */
function observingWorker(box: Sandbox, mode: 'fix' | 'fail-once' = 'fix'): string {
  const dir = join(box.root, 'tools');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'observing-worker.mjs');
  writeFileSync(
    path,
    [
      "import { readFileSync, writeFileSync } from 'node:fs';",
      "const input = JSON.parse(readFileSync(0, 'utf8'));",
      "writeFileSync('seen-input.json', JSON.stringify(input.prior_observations_untrusted ?? null) + '\\n');",
      "const wrong = process.argv[2] === 'fail-once' && input.attempt === 1;",
      "const src = readFileSync('src/math.js', 'utf8');",
      "writeFileSync('src/math.js', src.replace(/return a . b;/, wrong ? 'return a * b;' : 'return a + b;'));",
      "process.stdout.write(JSON.stringify({ summary: wrong ? 'multiplied' : 'add() now adds: a + b', done: true, commands_run: [], risks: [] }));",
    ].join('\n'),
  );
  return `node ${path} ${mode}`;
}

const seenIn = (file: string): Observation[] | null => JSON.parse(readFileSync(file, 'utf8')) as Observation[] | null;

/** The memory directories under this sandbox's CRUSTCORE_HOME. */
const memoryDirs = (box: Sandbox): string[] => {
  const projects = join(box.home, 'projects');
  if (!existsSync(projects)) return [];
  return readdirSync(projects)
    .map((id) => join(projects, id, 'memory'))
    .filter((dir) => existsSync(dir));
};

describe('crustcore run uses repository memory', { timeout: 900_000 }, () => {
  it('gives a nugget and the capsule to the worker; --no-memory gives nothing', () => {
    const box = atBase(stored);
    const worker = observingWorker(box);

    // CONTROL first (nothing applied with deny, so the repository stays as it was): no observations.
    const off = crustcore(box, [
      'run',
      '--goal',
      'fix add in src/math.js',
      '--worker',
      worker,
      '--approve',
      'deny',
      '--no-memory',
      '--json',
    ]);
    expect(off.status, off.stdout + off.stderr).toBe(4);
    expect(off.json?.memory).toEqual({ skipped: '--no-memory' });
    const kept = join(box.root, 'off.patch');
    const diff = crustcore(box, ['diff', String(off.json?.taskId), '--export', kept]);
    expect(diff.status, diff.stderr).toBe(0);
    expect(readFileSync(kept, 'utf8')).toMatch(/^\+null$/m);

    const on = crustcore(box, [
      'run',
      '--goal',
      'fix add in src/math.js',
      '--worker',
      worker,
      '--approve',
      'auto',
      '--json',
    ]);
    expect(on.status, on.stdout + on.stderr).toBe(0);
    const report = on.json?.memory as { observations: number; bytes: number; learned: number };
    expect(report.observations).toBeGreaterThanOrEqual(2);
    expect(report.bytes).toBeGreaterThan(NUGGET.length);
    const seen = seenIn(join(box.repo, 'seen-input.json')) ?? [];
    expect(seen.find((o) => o.source.includes('nuggets'))?.text).toContain(NUGGET);
    expect(seen.find((o) => o.source === 'repository capsule')?.text).toMatch(/^files: \d+/);
    expect(seen.find((o) => o.source.includes('code related'))?.text).toContain('src/math.js:1 function add');
  });

  it('creates no store in a repository that has none, and narrates nothing about memory', () => {
    const box = makeRepo(NODE_REPO);
    const run = crustcore(box, ['run', '--goal', 'fix add', '--worker', observingWorker(box), '--approve', 'auto']);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).not.toMatch(/memory:/);
    expect(seenIn(join(box.repo, 'seen-input.json'))).toBeNull();
    expect(existsSync(join(box.home, 'projects'))).toBe(true);
    expect(memoryDirs(box)).toEqual([]);
  });

  it('learns the failure of attempt 1 and the fix of attempt 2 on its own', () => {
    const box = atBase(stored);
    const run = crustcore(box, [
      'run',
      '--goal',
      'fix add',
      '--worker',
      observingWorker(box, 'fail-once'),
      '--approve',
      'auto',
      '--json',
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.json).toMatchObject({ outcome: 'completed', attempts: 2 });
    expect((run.json?.memory as { learned: number } | undefined)?.learned).toBeGreaterThanOrEqual(1);
    const listed = crustcore(box, ['memory', 'list', '--kind', 'failure', '--json']);
    expect(listed.status, listed.stderr).toBe(0);
    const failures = (listed.json?.memories ?? []) as {
      body: string;
      fix: string | null;
      source: string;
      taskId: string | null;
    }[];
    // This task's own failure memory (the store is shared with the other tests).
    const failure = failures.find((m) => m.taskId === run.json?.taskId);
    expect(failure, JSON.stringify(failures)).toBeDefined();
    expect(failure?.source).toBe('verifier');
    expect(failure?.body).toContain('while working on: fix add');
    expect(failure?.fix).toContain('add() now adds: a + b');
  });

  it('skips a store another process holds, with one line, and the task completes', () => {
    const box = atBase(stored);
    const [dataDir] = memoryDirs(box);
    expect(dataDir).toBeDefined();
    // The holder's part that a second opener meets first: the data directory's lock (a holder takes
    // it before PGlite starts), held here by this process. Unheld, this very store reaches the worker
    // (the first test's run, the control).
    expect(memoryDirs(box)).toHaveLength(1);
    const held = DataDirLock.acquire(String(dataDir));
    if (held._tag === 'Left') throw new Error(held.left.reason);
    try {
      const run = crustcore(box, ['run', '--goal', 'fix add', '--worker', observingWorker(box), '--approve', 'auto']);
      expect(run.status, run.stdout + run.stderr).toBe(0);
      const lines = run.stdout.split('\n').filter((line) => line.startsWith('memory:'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^memory: skipped — .*in use by pid \d+.*; use --no-memory to silence$/);
      expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toContain('a + b');
      expect(seenIn(join(box.repo, 'seen-input.json'))).toBeNull();
    } finally {
      held.right.release();
    }
  });
});

/** Two chat requests on a scripted model server; resolves with the chat's output and every model request. */
async function twoChatRequests(box: Sandbox) {
  const server = await startModelServer(
    (_request, index) =>
      [
        {
          text: 'Fixing add.',
          calls: [
            { name: 'edit_file', arguments: { path: 'src/math.js', oldText: 'a - b', newText: 'a + b', startLine: 2 } },
          ],
        },
        { text: 'add() adds.' },
        { text: 'A note.', calls: [{ name: 'write_file', arguments: { path: 'NOTES.md', content: 'pure\n' } }] },
        { text: 'Noted.' },
      ][index] ?? { text: 'done' },
  );
  try {
    const registry = join(box.root, 'models.json');
    writeFileSync(registry, registryFor(server));
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: box.root, CRUSTCORE_HOME: box.home, NO_COLOR: '1' };
    const args = ['chat', '--dir', box.repo, '--models-config', registry, '--approve', 'auto'];
    const chat = spawn(process.execPath, [CLI, ...args], { cwd: box.repo, stdio: ['pipe', 'pipe', 'pipe'], env });
    let text = '';
    let wake: () => void = () => undefined;
    chat.stdout.on('data', (piece: Buffer) => {
      text += piece.toString('utf8');
      wake();
    });
    chat.stderr.on('data', (piece: Buffer) => {
      text += piece.toString('utf8');
    });
    const exited = new Promise<number | null>((done) =>
      chat.once('exit', (code) => {
        done(code);
        wake();
      }),
    );
    const committed = async (count: number) => {
      while ((text.match(/committed on crustcore\//g) ?? []).length < count) {
        if (chat.exitCode !== null) throw new Error(`chat exited early:\n${text}`);
        await new Promise<void>((done) => {
          wake = done;
        });
      }
    };
    chat.stdin.write('fix add in src/math.js\n');
    await committed(1);
    chat.stdin.write('note that math helpers stay pure\n');
    await committed(2);
    chat.stdin.end();
    expect(await exited).toBe(0);
    return { text, requests: server.requests.map((r) => JSON.stringify(r.json.messages ?? [])) };
  } finally {
    await server.close();
  }
}

describe('crustcore chat uses repository memory', { timeout: 900_000 }, () => {
  it('the first request of a session gets the bundle, fenced as untrusted; the next one continues it', async () => {
    const box = makeRepo(NODE_REPO);
    expect(crustcore(box, ['memory', 'add', NUGGET]).status).toBe(0);
    const { text, requests } = await twoChatRequests(box);
    expect(text.match(/memory: \d+ observations, \d+ bytes for this goal$/gm)).toHaveLength(1);
    const [first, , third] = requests;
    // The nugget is inside an untrusted-data fence of the first request's task prompt (JSON-escaped here).
    expect(first).toMatch(/untrusted-data[^<]*Arithmetic helpers in src\/math.js stay pure/);
    // The second request's session carries the first prompt: the bundle appears once, not once per request.
    expect(third?.split(NUGGET)).toHaveLength(2);
    expect(third).toContain('note that math helpers stay pure');
  });
});
