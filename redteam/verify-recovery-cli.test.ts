/**
 * The CLI face of this layer: `crustcore gc` removes worktrees of dead
 * owners (and keeps live ones), `crustcore recover` rolls back an apply
 * killed midway and is idempotent, `crustcore diff --export` writes a patch
 * `git apply` accepts.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import type { Io } from '../packages/crustcore/src/cli/output.js';
import { diffCommand } from '../packages/crustcore/src/commands/diff.js';
import { gcCommand } from '../packages/crustcore/src/commands/gc.js';
import { recoverCommand } from '../packages/crustcore/src/commands/recover.js';
import {
  applyChanges,
  createTaskWorktree,
  ExternalCommandBackend,
  removeTaskWorktree,
  verifyPatch,
} from '../packages/verify/src/index.js';
import {
  cap,
  type Fixture,
  git,
  makeRepo,
  NODE_PROJECT,
  nodeWorker,
  repoOf,
} from '../packages/verify/test/git-fixture.js';

const fixtures: Fixture[] = [];
afterEach(() => {
  for (const fixture of fixtures.splice(0)) fixture.cleanup();
});

function testIo(cwd: string): { io: Io; out: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let text = '';
  stdout.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  stderr.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  const plain = {
    bold: (s: string) => s,
    dim: (s: string) => s,
    red: (s: string) => s,
    green: (s: string) => s,
    yellow: (s: string) => s,
    cyan: (s: string) => s,
  };
  return { io: { stdout, stderr, stdin: new PassThrough(), env: {}, cwd, out: plain, err: plain }, out: () => text };
}

describe('crustcore gc / recover / diff', () => {
  it('gc removes worktrees whose owner died and keeps live ones', async () => {
    const fixture = makeRepo(NODE_PROJECT);
    fixtures.push(fixture);
    const repo = await repoOf(fixture);
    const dead = await createTaskWorktree({ repo, taskId: 't_dead', home: fixture.home });
    const live = await createTaskWorktree({ repo, taskId: 't_live', home: fixture.home });
    if (dead._tag === 'Left' || live._tag === 'Left') throw new Error('worktree');
    // A process that has exited: its pid no longer names it.
    const gonePid = Number(execFileSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' }).trim());
    const owner = JSON.parse(readFileSync(dead.right.ownerFile, 'utf8'));
    writeFileSync(dead.right.ownerFile, JSON.stringify({ ...owner, pid: gonePid, startTime: '1' }));
    expect(git(fixture.repoDir, 'worktree', 'list').trim().split('\n')).toHaveLength(3);
    const { io, out } = testIo(fixture.base);
    expect(await gcCommand.run(['--home', fixture.home, '--json'], io)).toBe(0);
    const report = JSON.parse(out());
    expect(report.removed.map((r: { taskId: string }) => r.taskId)).toEqual(['t_dead']);
    expect(report.kept.map((k: { taskId: string }) => k.taskId)).toEqual(['t_live']);
    expect(existsSync(dead.right.path)).toBe(false);
    expect(existsSync(live.right.path)).toBe(true);
    expect(git(fixture.repoDir, 'worktree', 'list').trim().split('\n')).toHaveLength(2);
    await removeTaskWorktree(live.right);
    expect(git(fixture.repoDir, 'worktree', 'list').trim().split('\n')).toHaveLength(1);
  });

  it('recover rolls back an apply interrupted midway, and a second run does nothing', async () => {
    const fixture = makeRepo(NODE_PROJECT);
    fixtures.push(fixture);
    const journalRoot = join(fixture.home, 'journal');
    const text = (s: string) => new TextEncoder().encode(s);
    const sha = (s: string) => execFileSync('sha256sum', { input: s, encoding: 'utf8' }).split(' ')[0] as string;
    const oldMath = readFileSync(join(fixture.repoDir, 'src/math.js'), 'utf8');
    const oldReadme = readFileSync(join(fixture.repoDir, 'README.md'), 'utf8');
    // A simulated crash right after APPLYING is durable: the throw escapes before any in-process rollback.
    expect(() =>
      applyChanges(
        [
          {
            path: 'README.md',
            before: { sha256: sha(oldReadme), mode: 'regular' },
            after: { bytes: text('new\n'), mode: 'regular' },
          },
          {
            path: 'src/math.js',
            before: { sha256: sha(oldMath), mode: 'regular' },
            after: { bytes: text('new\n'), mode: 'regular' },
          },
        ],
        {
          root: fixture.repoDir,
          journalRoot,
          onStep: (step) => {
            if (step === 'applying') throw new Error('power cut');
          },
        },
      ),
    ).toThrow('power cut');
    const first = testIo(fixture.base);
    expect(await recoverCommand.run(['--home', fixture.home], first.io)).toBe(0);
    expect(first.out()).toContain('1 journal(s) recovered');
    expect(readFileSync(join(fixture.repoDir, 'README.md'), 'utf8')).toBe(oldReadme);
    expect(git(fixture.repoDir, 'status', '--porcelain')).toBe('');
    const second = testIo(fixture.base);
    expect(await recoverCommand.run(['--home', fixture.home, '--json'], second.io)).toBe(0);
    expect(JSON.parse(second.out()).journals.map((j: { action: string }) => j.action)).toEqual(['none']);
  });

  it('diff shows the task patch and --export writes one git apply accepts', async () => {
    const fixture = makeRepo(NODE_PROJECT);
    fixtures.push(fixture);
    const repo = await repoOf(fixture);
    const worktree = await createTaskWorktree({ repo, taskId: 't_diff', home: fixture.home });
    if (worktree._tag === 'Left') throw new Error(worktree.left.message);
    const result = await new ExternalCommandBackend(cap('worker'), {
      argv: nodeWorker(
        "fs.writeFileSync('src/math.js', 'export const add = (a, b) => a + b;\\n'); fs.writeFileSync('logo.bin', Buffer.from([0, 1, 2, 255]));",
      ),
    }).run(
      {
        taskId: 't_diff',
        goal: 'g',
        attempt: 1,
        previousDiagnosis: null,
        allowedRoots: [],
        forbiddenPaths: [],
        maxSeconds: 30,
        maxOutputBytes: 65536,
      },
      { worktree: worktree.right, home: fixture.home },
    );
    await removeTaskWorktree(worktree.right);
    if (result.patch._tag !== 'Patch') throw new Error(JSON.stringify(result.patch));
    const outcome = await verifyPatch(cap('verify'), {
      repo,
      taskId: 't_diff',
      patch: result.patch.patch,
      argv: ['node', '--test'],
      nowMs: 1,
      home: fixture.home,
    });
    expect(outcome._tag === 'Right' && outcome.right._tag).toBe('Verified');
    const shown = testIo(fixture.base);
    expect(await diffCommand.run(['t_diff', '--home', fixture.home, '--stat'], shown.io)).toBe(0);
    expect(shown.out()).toContain('t_diff verified');
    expect(shown.out()).toContain('A logo.bin (binary)');
    const exported = testIo(fixture.base);
    expect(await diffCommand.run(['t_diff', '--home', fixture.home, '--export', 'task.patch'], exported.io)).toBe(0);
    git(fixture.repoDir, 'apply', join(fixture.base, 'task.patch'));
    expect(readFileSync(join(fixture.repoDir, 'src/math.js'), 'utf8')).toContain('a + b');
    expect([...readFileSync(join(fixture.repoDir, 'logo.bin'))]).toEqual([0, 1, 2, 255]);
    const missing = testIo(fixture.base);
    expect(await diffCommand.run(['t_nope', '--home', fixture.home], missing.io)).toBe(2);
  });
});
