/**
 * A repository's `.crustcore/config.json` comes with the repository: it may
 * tighten policy, never loosen it without a person (docs/config.md). These
 * attacks are observed by a real `run` of the built CLI (approval mode and
 * the worker are what a task does: auto-apply versus refusing to start
 * without a terminal), and by the kind of file the project config is. Each
 * has a CONTROL showing the same value does take effect from the user's own
 * file (or once a person trusts it), so no test passes because the value was
 * never read at all. Spellings: config-trust-spellings.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCli, makeRepo, NODE_REPO } from '../golden/cli-harness.js';
import { cli, FIX_ADD, fixed, listed, runFix, USAGE, userFile, writeProject, writeUser } from './config-harness.js';

beforeAll(() => buildCli(), 120_000);

describe('a repository config cannot loosen the approval mode (a real run)', () => {
  it('project "approve": "auto" is ignored with a warning: with no terminal the run refuses to start, tree untouched', () => {
    const box = makeRepo(NODE_REPO);
    writeProject(box, '{ "approve": "auto" }\n');
    const run = runFix(box);
    expect(run.status, run.stderr).toBe(USAGE);
    expect(run.stderr).toMatch(/needs a terminal/);
    expect(run.stderr).toMatch(/"approve": "auto" .*ignored/);
    expect(run.stderr).toMatch(/--approve auto/);
    expect(run.stderr).toMatch(/crustcore config trust approve/);
    expect(fixed(box)).toBe(false);
  });

  it('CONTROL: the same value from the user file applies the verified fix', () => {
    const box = makeRepo(NODE_REPO);
    writeUser(box, '{ "approve": "auto" }\n');
    const run = runFix(box);
    expect(run.status, run.stderr).toBe(0);
    expect(fixed(box)).toBe(true);
  });

  it('CONTROL: once a person trusts the project value it applies; a different value needs the person again', () => {
    const trusted = makeRepo(NODE_REPO);
    writeProject(trusted, '{ "approve": "auto" }\n');
    const trust = cli(trusted, ['config', 'trust', 'approve']);
    expect(trust.status, trust.stderr).toBe(0);
    const run = runFix(trusted);
    expect(run.status, run.stderr).toBe(0);
    expect(fixed(trusted)).toBe(true);
    writeProject(trusted, '{ "approve": "auto", "budgets": { "maxTurns": 1000 } }\n');
    expect(listed(trusted).settings.get('approve')).toMatchObject({ source: 'project', value: 'auto' });
    expect(listed(trusted).settings.get('budgets.maxTurns')).toMatchObject({ source: 'default', value: 40 });
  });

  it('tightening is taken: project "approve": "deny" over the user\'s auto verifies but applies nothing', () => {
    const box = makeRepo(NODE_REPO);
    writeUser(box, '{ "approve": "auto" }\n');
    writeProject(box, '{ "approve": "deny" }\n');
    const run = runFix(box);
    expect(run.status, run.stderr).toBe(4);
    expect(fixed(box)).toBe(false);
  });
});

describe('a repository config cannot choose who writes the code (a real run)', () => {
  it('project "worker" is ignored: run still asks who writes the patch', () => {
    const box = makeRepo(NODE_REPO);
    writeProject(box, JSON.stringify({ worker: `sh -c "${FIX_ADD}"`, backend: 'external' }));
    const run = cli(box, ['run', '--goal', 'fix add', '--approve', 'auto', '--json']);
    expect(run.status, run.stderr).toBe(USAGE);
    expect(run.stderr).toMatch(/say who writes the patch/);
    expect(run.stderr).toMatch(/"worker": .*ignored/);
    expect(fixed(box)).toBe(false);
  });

  it('CONTROL: the same worker from the user file runs and the fix lands', () => {
    const box = makeRepo(NODE_REPO);
    writeUser(box, JSON.stringify({ worker: `sh -c "${FIX_ADD}"`, approve: 'auto' }));
    const run = cli(box, ['run', '--goal', 'fix add', '--json']);
    expect(run.status, run.stderr).toBe(0);
    expect(fixed(box)).toBe(true);
  });
});

describe('a project config that is not a regular file inside the repository is refused, not followed', () => {
  it('a symlinked .crustcore pointing outside the repository (exit 2); CONTROL: that file as the user file is read', () => {
    const box = makeRepo(NODE_REPO);
    const outside = join(box.root, 'elsewhere');
    mkdirSync(outside);
    writeFileSync(join(outside, 'config.json'), '{ "approve": "auto" }\n');
    symlinkSync(outside, join(box.repo, '.crustcore'));
    const run = runFix(box);
    expect(run.status, run.stderr).toBe(USAGE);
    expect(run.stderr).toMatch(/\.crustcore: is a symbolic link/);
    expect(fixed(box)).toBe(false);

    const control = makeRepo(NODE_REPO);
    mkdirSync(join(control.root, '.config', 'crustcore'), { recursive: true });
    symlinkSync(join(outside, 'config.json'), userFile(control));
    expect(listed(control).settings.get('approve')).toMatchObject({ source: 'user', value: 'auto' });
  });

  it('a config.json that is a symlink, in each of three layouts', () => {
    for (const target of ['../../elsewhere.json', '/dev/zero', 'other.json']) {
      const box = makeRepo(NODE_REPO);
      writeFileSync(join(box.root, 'elsewhere.json'), '{ "approve": "auto" }\n');
      mkdirSync(join(box.repo, '.crustcore'));
      writeFileSync(join(box.repo, '.crustcore', 'other.json'), '{ "approve": "auto" }\n');
      symlinkSync(target, join(box.repo, '.crustcore', 'config.json'));
      const run = runFix(box);
      expect(run.status, `${target}: ${run.stderr}`).toBe(USAGE);
      expect(run.stderr).toMatch(/config\.json: is a symbolic link/);
      expect(fixed(box)).toBe(false);
    }
  });

  it('a FIFO answers at once with exit 2 (nothing blocks on it)', () => {
    const box = makeRepo(NODE_REPO);
    mkdirSync(join(box.repo, '.crustcore'));
    execFileSync('mkfifo', [join(box.repo, '.crustcore', 'config.json')]);
    const run = runFix(box);
    expect(run.status, run.stderr).toBe(USAGE);
    expect(run.stderr).toMatch(/is a FIFO, not a regular file/);
  });

  it('a huge file (over 64 KiB) is refused; CONTROL: the same bytes as the user file (limit 1 MiB) are read', () => {
    const text = `{ "approve": "auto" ${' '.repeat(70 * 1024)}}\n`;
    const box = makeRepo(NODE_REPO);
    writeProject(box, text);
    const run = runFix(box);
    expect(run.status, run.stderr).toBe(USAGE);
    expect(run.stderr).toMatch(/bytes \(the limit is 65536\)/);
    expect(fixed(box)).toBe(false);

    const control = makeRepo(NODE_REPO);
    writeUser(control, text);
    expect(listed(control).settings.get('approve')).toMatchObject({ source: 'user', value: 'auto' });
  });
});
