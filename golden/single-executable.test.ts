/**
 * The single executable (docs/single-executable.md), as a user gets it: built from this
 * checkout by scripts/sea.mjs (the Node binary with the CLI and a start-up snapshot injected), copied alone into an
 * empty directory, and run there. The snapshot evaluated every module when it was built, so these
 * tests also check that nothing of the build's environment stuck: the state goes where this run's
 * CRUSTCORE_HOME says. A Node single executable runs only the CLI it carries, so the steps that need
 * Node for a script (the setup's npm) use the PATH's node, and say so when there is none.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { makeRepo, type Sandbox } from './cli-harness.js';
import { commitAll, npm } from './real-harness.js';

// Building injects ~100 MB into a copy of node; the setup installs from the registry.
vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

const PACKAGE = resolve(import.meta.dirname, '../packages/crustcore');
const npmCache = join(homedir(), '.cache', 'crustcore-golden', 'npm-cache');
mkdirSync(npmCache, { recursive: true });

let alone = '';
beforeAll(() => {
  execFileSync(process.execPath, [resolve(import.meta.dirname, '../scripts/sea.mjs')], { stdio: 'pipe' });
  const box = makeRepo({ 'README.md': 'where the executable is copied\n' });
  alone = join(box.root, 'bin', 'crustcore');
  mkdirSync(join(box.root, 'bin'));
  copyFileSync(join(PACKAGE, 'dist/sea/crustcore'), alone);
  execFileSync('chmod', ['755', alone]);
});

function sea(box: Sandbox, args: readonly string[], path = process.env.PATH ?? '/usr/bin:/bin') {
  return spawnSync(alone, args, {
    cwd: box.repo,
    input: '',
    encoding: 'utf8',
    timeout: 240_000,
    env: { PATH: path, HOME: box.root, CRUSTCORE_HOME: box.home, CRUSTCORE_NPM_CACHE: npmCache, NO_COLOR: '1' },
  });
}

/** A project whose test imports a registry dependency that is not installed (gitignored, as usual). */
function projectWithDependency(): Sandbox {
  const box = makeRepo({
    'package.json':
      '{ "name": "sea-dep", "private": true, "type": "module", "scripts": { "test": "node --test" }, "dependencies": { "ms": "2.1.3" } }\n',
    'src/secs.js': "import ms from 'ms';\nexport function secs(text) {\n  return ms(text) / 100;\n}\n",
    'test/secs.test.js':
      "import assert from 'node:assert/strict';\nimport { test } from 'node:test';\nimport { secs } from '../src/secs.js';\ntest('secs', () => assert.equal(secs('2s'), 2));\n",
    '.gitignore': 'node_modules\n',
  });
  npm(box.repo, npmCache, ['install', '--package-lock-only']);
  commitAll(box, 'lockfile');
  return box;
}

const FIX = ['--goal', 'fix secs', '--worker', `sh -c "sed -i 's|/ 100|/ 1000|' src/secs.js"`, '--approve', 'auto'];

describe('golden: the single executable, copied alone', () => {
  it('answers --version, --help and a mistyped command; runs the demo with no file beside it', () => {
    const box = makeRepo({ 'README.md': 'x\n' });
    expect(readdirSync(join(alone, '..'))).toEqual(['crustcore']);
    expect(sea(box, ['--version']).stdout.trim()).toBe('crustcore 0.1.0');
    const help = sea(box, ['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Usage: crustcore <command>');
    const typo = sea(box, ['rnu']);
    expect(typo.status).toBe(2);
    expect(typo.stderr).toContain('Did you mean "run"?');
    const demo = sea(box, ['demo']);
    expect(demo.status, demo.stdout + demo.stderr).toBe(0);
    expect(demo.stdout).toContain('● completed: applied');
  });

  it('runs a task whose dependencies are not installed: setup through the PATH node, verified, applied; state under this run’s home', () => {
    const box = projectWithDependency();
    const run = sea(box, ['run', ...FIX]);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('● completed: applied');
    expect(readFileSync(join(box.repo, 'src/secs.js'), 'utf8')).toContain('/ 1000');
    // The environment was set up, under the CRUSTCORE_HOME given now (not the one of the build).
    expect(readdirSync(join(box.home, 'environments')).filter((name) => !name.startsWith('.'))).toHaveLength(1);
    expect(existsSync(join(box.repo, 'node_modules'))).toBe(false);
  });

  it('CONTROL: with no node on PATH the setup stops and says so; the executable never runs itself as node', () => {
    const box = projectWithDependency();
    const run = sea(box, ['run', ...FIX], '/nonexistent/bin');
    expect(run.status).not.toBe(0);
    expect(run.stdout + run.stderr).toContain('there is no node on PATH');
    expect(readFileSync(join(box.repo, 'src/secs.js'), 'utf8')).toContain('/ 100;');
  });
});
