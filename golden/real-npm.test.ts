/**
 * Golden tasks on a realistic npm workspace monorepo with REAL dependencies
 * from the registry (mocha, vitest, jest, typescript; one workspace with its
 * own node_modules): bug → worker fix → verified → applied, each with the
 * project's real test command. Then the same project cloned WITHOUT
 * node_modules (setup runs, the second task hits its cache), a patch that
 * adds a dependency (a person must see it), and a dependency whose install
 * script must not run without approval.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildCli, makeRepo, type Sandbox } from './cli-harness.js';
import { allNames, commitAll, crustcoreWith, git, npm, recordedRisks, writeFiles } from './real-harness.js';

// Real installs and real test runners: minutes, not the golden default of one.
vi.setConfig({ testTimeout: 300_000, hookTimeout: 600_000 });

const EXIT = { ok: 0, denied: 4 };
const scratch = mkdtempSync(join(tmpdir(), 'crustcore-real-npm-'));
/**
 * One npm cache for every run of this file, kept between runs (npm's cache is safe for concurrent
 * use): each package is downloaded once per machine, and `--prefer-offline` answers the metadata
 * from it. A fresh cache per run cost most of this file's CPU, in downloads that prove nothing.
 */
const npmCache = join(homedir(), '.cache', 'crustcore-golden', 'npm-cache');
mkdirSync(npmCache, { recursive: true });
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const MONOREPO: Readonly<Record<string, string>> = {
  '.gitignore': 'node_modules\ndist\n',
  'package.json': JSON.stringify(
    {
      name: 'mono',
      private: true,
      workspaces: ['packages/*'],
      devDependencies: { mocha: '10.8.2', vitest: '4.1.12', jest: '29.7.0', typescript: '5.9.3', 'is-number': '7.0.0' },
    },
    null,
    2,
  ),
  'packages/calc/package.json': '{ "name": "calc", "version": "1.0.0", "scripts": { "test": "mocha" } }\n',
  'packages/calc/index.js': 'exports.add = (a, b) => a - b;\n',
  'packages/calc/test/add.test.js':
    "const assert = require('node:assert');\nconst { add } = require('..');\nit('adds', () => assert.strictEqual(add(2, 3), 5));\n",
  'packages/web/package.json':
    '{ "name": "web", "version": "1.0.0", "type": "module", "scripts": { "test": "vitest run" } }\n',
  'packages/web/src/slug.js': "export const slug = (s) => s.toLowerCase().replaceAll(' ', '_');\n",
  'packages/web/src/slug.test.js':
    "import { expect, test } from 'vitest';\nimport { slug } from './slug.js';\ntest('slug', () => expect(slug('Hello World')).toBe('hello-world'));\n",
  'packages/legacy/package.json':
    '{ "name": "legacy", "version": "1.0.0", "scripts": { "test": "jest" }, "dependencies": { "is-number": "6.0.0" } }\n',
  'packages/legacy/index.js':
    "const isNumber = require('is-number');\nexports.count = (xs) => xs.filter(isNumber).length + 1;\n",
  'packages/legacy/index.test.js':
    "const { count } = require('./index');\ntest('counts numbers', () => expect(count([1, 'a', 2])).toBe(2));\n",
  'packages/shapes/package.json':
    '{ "name": "shapes", "version": "1.0.0", "scripts": { "test": "tsc -p . && node --test test/area.test.js" } }\n',
  'packages/shapes/tsconfig.json':
    '{ "compilerOptions": { "outDir": "dist", "module": "commonjs", "target": "es2022", "strict": true, "types": [] }, "include": ["src"] }\n',
  'packages/shapes/src/area.ts': 'export const area = (w: number, h: number): number => w + h;\n',
  // The test imports the build output (dist/ is gitignored): verify must run the build step.
  'packages/shapes/test/area.test.js':
    "const { test } = require('node:test');\nconst { strictEqual } = require('node:assert');\nconst { area } = require('../dist/area.js');\ntest('area', () => strictEqual(area(2, 3), 6));\n",
};

// vitest 4 cannot start under the verify profile's 16 GiB RLIMIT_AS today (V8 reserves its WebAssembly
// memory up front: ENVIRONMENT.md, "Runtimes under limits"); its task fails until the sandbox limits
// memory another way. It stays here on purpose: it is the test of that fix.
const FIX_CALC = "sed -i 's/a - b/a + b/' packages/calc/index.js";
/** A worker that needs a dependency's binary by its bare name, as `npx`-less agents do. */
const FIX_CALC_WITH_MOCHA = `command -v mocha >/dev/null && ${FIX_CALC}`;
const FIXES: readonly (readonly [string, string, string])[] = [
  // Its worker needs mocha on PATH: the control without the environment is the test before these.
  ['mocha (the worker finds it on PATH)', 'packages/calc', FIX_CALC_WITH_MOCHA],
  ['vitest', 'packages/web', "sed -i \"s/'_'/'-'/\" packages/web/src/slug.js"],
  ['jest (own node_modules)', 'packages/legacy', "sed -i 's/ + 1;/;/' packages/legacy/index.js"],
  ['typescript build step', 'packages/shapes', "sed -i 's/w + h/w * h/' packages/shapes/src/area.ts"],
];

let installed: Sandbox;

function runFix(box: Sandbox, workspace: string, script: string, extra: readonly string[] = []) {
  return crustcoreWith(
    box,
    [
      'run',
      '--goal',
      'fix the bug',
      '--verify',
      `npm test -w ${workspace}`,
      '--worker',
      `sh -c "${script.replaceAll('"', '\\"')}"`,
      '--approve',
      'auto',
      '--json',
      ...extra,
    ],
    { CRUSTCORE_NPM_CACHE: npmCache },
  );
}

beforeAll(() => {
  buildCli();
  installed = makeRepo(MONOREPO);
  npm(installed.repo, npmCache, ['install']);
  commitAll(installed, 'lockfile');
}, 600_000);

describe('golden: real npm projects with installed dependencies', () => {
  it('installs as a real monorepo does: hoisted deps at the root, a conflicting one in the workspace', () => {
    expect(existsSync(join(installed.repo, 'node_modules/mocha/package.json'))).toBe(true);
    expect(existsSync(join(installed.repo, 'packages/legacy/node_modules/is-number/package.json'))).toBe(true);
    // Control: the bugs are real — each package's own test command fails on the base.
    for (const [, workspace] of FIXES) {
      expect(() => npm(installed.repo, npmCache, ['test', '-w', workspace])).toThrow();
    }
  });

  it("control: without the environment the worker does not find the project's tools on PATH", () => {
    const control = runFix(installed, 'packages/calc', FIX_CALC_WITH_MOCHA, [
      '--no-environment',
      '--max-revisits',
      '0',
    ]);
    expect(control.json, control.stdout + control.stderr).not.toMatchObject({ outcome: 'completed' });
    expect(readFileSync(join(installed.repo, 'packages/calc/index.js'), 'utf8')).toBe(
      MONOREPO['packages/calc/index.js'],
    );
  });

  it.each(FIXES)('%s: worker fix → verified → applied', (_name, workspace, script) => {
    const run = runFix(installed, workspace, script);
    expect(run.status, run.stdout + run.stderr).toBe(EXIT.ok);
    expect(run.json).toMatchObject({ outcome: 'completed' });
    npm(installed.repo, npmCache, ['test', '-w', workspace]);
    commitAll(installed, `fix ${workspace}`);
  });
});

describe('golden: the same project without node_modules', () => {
  let clone: Sandbox;
  beforeAll(() => {
    clone = makeRepo({ 'README.md': 'placeholder\n' });
    rmSync(clone.repo, { recursive: true, force: true });
    git({ ...clone, repo: scratch }, 'clone', '-q', installed.repo, clone.repo);
    // Re-break two packages so there is work to do.
    writeFiles(clone.repo, { 'packages/calc/index.js': MONOREPO['packages/calc/index.js'] as string });
    writeFiles(clone.repo, { 'packages/legacy/index.js': MONOREPO['packages/legacy/index.js'] as string });
    commitAll(clone, 'regress');
  });

  it('setup runs (npm ci --ignore-scripts in the setup profile), verified, applied; the second task hits the cache', () => {
    expect(existsSync(join(clone.repo, 'node_modules'))).toBe(false);
    const first = runFix(clone, 'packages/calc', FIX_CALC);
    expect(first.status, first.stdout + first.stderr).toBe(EXIT.ok);
    const environments = join(clone.home, 'environments');
    const keys = readdirSync(environments).filter((name) => !name.startsWith('.'));
    expect(keys).toHaveLength(1);
    const record = join(environments, keys[0] as string, 'setup.json');
    const written = statSync(record).mtimeMs;
    commitAll(clone, 'fix calc');
    const second = runFix(clone, 'packages/legacy', (FIXES[2] as readonly string[])[2] as string);
    expect(second.status, second.stdout + second.stderr).toBe(EXIT.ok);
    // Same lockfile, same setup: no second install, the first result was reused.
    expect(readdirSync(environments).filter((name) => !name.startsWith('.'))).toEqual(keys);
    expect(statSync(record).mtimeMs).toBe(written);
    // Nothing was installed into the user's checkout.
    expect(existsSync(join(clone.repo, 'node_modules'))).toBe(false);
  });
});

describe('golden: a patch that adds a dependency', () => {
  it('verifies against a fresh setup of the new lockfile, and --approve auto does not apply it', () => {
    const box = makeRepo({ 'README.md': 'placeholder\n' });
    rmSync(box.repo, { recursive: true, force: true });
    // cp(1), not cpSync: the installed tree is hundreds of MB in thousands of files.
    execFileSync('cp', ['-a', installed.repo, box.repo]);
    // The next lockfile, made by real npm beside the repo; the worker copies it in (it has no network).
    const next = join(box.root, 'next');
    cpSync(box.repo, next, {
      recursive: true,
      filter: (path) => !path.includes('/.git') && !path.endsWith('node_modules'),
    });
    npm(next, npmCache, ['install', '--package-lock-only', '-w', 'packages/calc', 'is-odd@3.0.1']);
    writeFiles(box.repo, {
      '.next/package-lock.json': readFileSync(join(next, 'package-lock.json'), 'utf8'),
      '.next/calc.json': readFileSync(join(next, 'packages/calc/package.json'), 'utf8'),
      'packages/calc/index.js': MONOREPO['packages/calc/index.js'] as string,
    });
    commitAll(box, 'prepare');
    const script = `cp .next/package-lock.json package-lock.json && cp .next/calc.json packages/calc/package.json && ${FIX_CALC}`;
    const run = runFix(box, 'packages/calc', script);
    expect(run.status, run.stdout + run.stderr).toBe(EXIT.denied);
    expect(recordedRisks(box.home)).toContain('dependencies-changed');
    expect(readFileSync(join(box.repo, 'packages/calc/package.json'), 'utf8')).not.toContain('is-odd');
  });
});

describe('golden: install scripts of dependencies', () => {
  const EVIL = {
    '.gitignore': 'node_modules\n',
    'package.json':
      '{ "name": "app", "version": "1.0.0", "scripts": { "test": "node --test" }, "dependencies": { "evil": "file:vendor/evil" } }\n',
    'vendor/evil/package.json': JSON.stringify({
      name: 'evil',
      version: '1.0.0',
      main: 'index.js',
      scripts: {
        postinstall:
          "node -e \"require('fs').writeFileSync(require('path').join(process.env.INIT_CWD, 'postinstall-ran'), 'x')\"",
      },
    }),
    'vendor/evil/index.js': 'exports.twice = (x) => x + x + 1;\n',
    'test/twice.test.js':
      "const { test } = require('node:test');\nconst assert = require('node:assert');\nconst { twice } = require('evil');\ntest('twice', () => assert.strictEqual(twice(2), 4));\n",
  };

  it('control: a plain npm install runs the postinstall', () => {
    const dir = join(scratch, 'evil-control');
    writeFiles(dir, EVIL);
    npm(dir, npmCache, ['install']);
    expect(existsSync(join(dir, 'postinstall-ran'))).toBe(true);
  });

  /** The task fixes the dependency's code; the setup (the default, or `setup`) installs it first. */
  function fixEvil(setup: readonly string[]): void {
    const box = makeRepo(EVIL);
    npm(box.repo, npmCache, ['install', '--package-lock-only', '--ignore-scripts']);
    commitAll(box, 'lockfile');
    const worker = `sh -c "sed -i 's/ + 1;/;/' vendor/evil/index.js"`;
    const args = [
      'run',
      '--goal',
      'fix',
      '--verify',
      'npm test',
      ...setup,
      '--worker',
      worker,
      '--approve',
      'auto',
      '--json',
    ];
    const real = crustcoreWith(box, args, { CRUSTCORE_NPM_CACHE: npmCache });
    expect(real.status, real.stdout + real.stderr).toBe(EXIT.ok);
    expect(allNames(join(box.home, 'environments'))).toContain('evil');
    expect(allNames(join(box.home, 'environments'))).not.toContain('postinstall-ran');
    expect(existsSync(join(box.repo, 'postinstall-ran'))).toBe(false);
  }

  it('setup does not run it without approval; the task still verifies', () => {
    fixEvil([]);
  });

  it('a setup the user names (npm install, no --ignore-scripts) runs no install script without approval either', () => {
    fixEvil(['--setup', 'npm install']);
  });
});
