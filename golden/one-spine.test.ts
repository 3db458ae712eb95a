/**
 * One spine: every surface writes one repository's ledger through one kernel.
 * Three `crustcore run`s and two `crustcore chat` requests (the native agent on
 * a scripted model server) in one repository, then `crustcore inspect --replay`
 * must replay the whole log — before one kernel per ledger, the second task's
 * first frame diverged (exit 20). A second process on a busy ledger gets the
 * documented "busy" exit (75), never a second kernel writing frames.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ModelServer, registryFor, startModelServer } from './agent/model-server.js';
import { buildCli, CLI, crustcore, makeRepo, NODE_REPO, type Sandbox } from './cli-harness.js';

const REPO_ROOT = resolve(import.meta.dirname, '..');
beforeAll(() => buildCli(), 60_000);

let server: ModelServer | null = null;
let chat: ChildProcess | null = null;
afterEach(async () => {
  chat?.kill('SIGKILL');
  await server?.close();
});

function commitAll(box: Sandbox, message: string): void {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: box.root, GIT_CONFIG_NOSYSTEM: '1' };
  const git = (...args: string[]) => execFileSync('git', args, { cwd: box.repo, stdio: 'pipe', env });
  git('add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', message);
}

const runWorker = (box: Sandbox, goal: string, script: string) =>
  crustcore(box, ['run', '--goal', goal, '--worker', `sh -c "${script}"`, '--approve', 'auto', '--json']);

/** Collects a child's stdout and resolves when `pattern` has appeared `count` times. */
function outputOf(child: ChildProcess): {
  text: () => string;
  until: (pattern: RegExp, count: number) => Promise<void>;
} {
  let text = '';
  const waiters: (() => void)[] = [];
  child.stdout?.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
    for (const wake of waiters.splice(0)) wake();
  });
  const until = async (pattern: RegExp, count: number): Promise<void> => {
    const global = new RegExp(pattern.source, 'g');
    while ((text.match(global) ?? []).length < count) {
      if (child.exitCode !== null) throw new Error(`chat exited early:\n${text}`);
      await new Promise<void>((wake) => waiters.push(wake));
    }
  };
  return { text: () => text, until };
}

async function twoChatRequests(box: Sandbox): Promise<string> {
  server = await startModelServer(
    (_request, index) =>
      [
        { text: 'Writing notes.', calls: [{ name: 'write_file', arguments: { path: 'CHAT1.md', content: 'one\n' } }] },
        { text: 'Notes written.' },
        { text: 'More notes.', calls: [{ name: 'write_file', arguments: { path: 'CHAT2.md', content: 'two\n' } }] },
        { text: 'Second notes written.' },
      ][index] ?? { text: 'done' },
  );
  const registry = join(box.root, 'models.json');
  writeFileSync(registry, registryFor(server));
  chat = spawn(
    process.execPath,
    [
      CLI,
      'chat',
      '--dir',
      box.repo,
      '--models-config',
      registry,
      '--verify',
      'node --test',
      '--approve',
      'auto',
    ],
    {
      cwd: REPO_ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: box.root, CRUSTCORE_HOME: box.home, NO_COLOR: '1' },
    },
  );
  const out = outputOf(chat);
  chat.stdin?.write('write CHAT1.md\n');
  await out.until(/committed on crustcore\//, 1);
  chat.stdin?.write('write CHAT2.md\n');
  await out.until(/committed on crustcore\//, 2);
  const exited = new Promise<number | null>((done) => chat?.once('exit', (code) => done(code)));
  chat.stdin?.end();
  await exited;
  return out.text();
}

describe('one kernel per ledger, across surfaces', () => {
  it('3 runs and 2 chat requests in one repository replay as one log (inspect --replay exit 0)', async () => {
    const box = makeRepo(NODE_REPO);
    const first = runWorker(box, 'fix add', "sed -i 's/a - b/a + b/' src/math.js");
    expect(first.status, first.stdout + first.stderr).toBe(0);
    // Later tasks start from HEAD: commit the applied fix, as a person would.
    commitAll(box, 'fix add');
    for (const n of [2, 3]) {
      const run = runWorker(box, `note ${n}`, `echo note${n} > NOTE${n}.md`);
      expect(run.status, run.stdout + run.stderr).toBe(0);
      // The run's own check of its log: intact and replayable with every earlier task in it.
      expect(run.json?.inspect).toMatchObject({ ok: true });
      expect(readFileSync(join(box.repo, `NOTE${n}.md`), 'utf8')).toBe(`note${n}\n`);
      commitAll(box, `note ${n}`);
    }
    const chatText = await twoChatRequests(box);
    expect(chatText.match(/committed on crustcore\//g)?.length).toBe(2);

    const stateDir = String(first.json?.stateDir);
    const inspect = crustcore(box, ['inspect', '--dir', stateDir, '--replay', '--json']);
    expect(inspect.status, inspect.stdout + inspect.stderr).toBe(0);
    const report = inspect.json as { tasks?: unknown[]; replay?: { events: number } } | null;
    expect(report?.tasks?.length).toBe(5);
    const log = readFileSync(join(stateDir, 'events.log'));
    // One kernel.open frame: the log was opened once and every later process continued its kernel.
    expect(log.toString('latin1').split('kernel.open').length - 1).toBe(1);
  }, 300_000);
});
