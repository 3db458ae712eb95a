/**
 * Verification that passes WITHOUT a fix. Each attack leaves the bug in
 * place and makes the suite report success anyway: by changing what the
 * verify command runs (test scripts, runner configs), by shadowing the runner
 * or its modules, by weakening files the runner discovers as tests, or by
 * exiting 0 while the runner's own summary says tests failed. Each has a
 * CONTROL: on the host, without CrustCore, the unfixed suite really passes
 * (exit 0). CrustCore must either fail the verification or mark the patch as
 * needing a person, named for what it is.
 */
import { argvHash } from '@crustcore/sandbox';
import { afterEach, describe, expect, it } from 'vitest';
import { needsApproval, type RiskKind } from '../packages/verify/src/index.js';
import { NODE_PROJECT } from '../packages/verify/test/git-fixture.js';
import {
  applyWithoutCrustCore,
  cleanupFixtures,
  hostPython,
  type Plant,
  plantPatch,
  riskKinds,
  runHost,
  verifyPlanted,
} from './patch-harness.js';

afterEach(cleanupFixtures);

const PY = {
  'calc.py': 'def double(x):\n    return x + 1\n',
  'tests/__init__.py': '',
  'tests/test_calc.py':
    'import unittest\nfrom calc import double\n\n\nclass T(unittest.TestCase):\n    def test_double(self):\n        self.assertEqual(double(4), 8)\n\n    def test_other(self):\n        self.assertTrue(True)\n',
};
const python = hostPython();
const pytest = (dir: string) => runHost(dir, [python, '-m', 'pytest', '-q', '-p', 'no:cacheprovider']);

async function plantedNeedingPerson(base: Record<string, string>, steps: readonly Plant[], kind: RiskKind) {
  const planted = await plantPatch(base, steps);
  expect(riskKinds(planted.patch.risks)).toContain(kind);
  expect(needsApproval(planted.patch.risks)).toBe(true);
  return planted;
}

describe('control: the unfixed Python suite fails on the host', () => {
  it('pytest exits non-zero on the base', async () => {
    const planted = await plantPatch(PY, [{ file: 'README.md', text: 'x\n' }]);
    expect(pytest(applyWithoutCrustCore(planted)).status).not.toBe(0);
  });
});

describe('runner configuration that changes what verify runs', () => {
  const conftest = [
    'import pytest',
    '',
    '@pytest.hookimpl(hookwrapper=True)',
    'def pytest_runtest_makereport(item, call):',
    '    outcome = yield',
    "    outcome.get_result().outcome = 'passed'",
    '',
  ].join('\n');
  const deselect = '--deselect tests/test_calc.py::T::test_double';

  it.each([
    ['conftest.py at the root', { file: 'conftest.py', text: conftest }],
    ['conftest.py beside the tests', { file: 'tests/conftest.py', text: conftest }],
    ['pytest.ini addopts', { file: 'pytest.ini', text: `[pytest]\naddopts = ${deselect}\n` }],
    [
      'pyproject [tool.pytest.ini_options]',
      { file: 'pyproject.toml', text: `[tool.pytest.ini_options]\naddopts = "${deselect}"\n` },
    ],
    [
      'setup.cfg [tool:pytest]',
      { file: 'setup.cfg', text: `[metadata]\nname = x\n\n[tool:pytest]\naddopts = ${deselect}\n` },
    ],
    ['tox.ini [pytest]', { file: 'tox.ini', text: `[pytest]\naddopts = ${deselect}\n` }],
  ] as const)('%s: pytest passes with the bug in place; CrustCore needs a person', async (_what, step) => {
    const planted = await plantedNeedingPerson(PY, [step], 'verify-command-changed');
    expect(pytest(applyWithoutCrustCore(planted)).status).toBe(0); // CONTROL
  });

  it('a pyproject edit outside the pytest sections is not a runner change', async () => {
    const base = { ...PY, 'pyproject.toml': '[project]\nname = "x"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n' };
    const planted = await plantPatch(base, [
      { file: 'pyproject.toml', text: '[project]\nname = "y"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n' },
    ]);
    expect(riskKinds(planted.patch.risks)).not.toContain('verify-command-changed');
  });

  it('package.json test script `|| true`: npm test exits 0; CrustCore fails the run (the summary says fail) and names the script', async () => {
    const pkg = { ...JSON.parse(NODE_PROJECT['package.json'] as string), scripts: { test: 'node --test || true' } };
    const planted = await plantedNeedingPerson(
      NODE_PROJECT,
      [{ file: 'package.json', text: JSON.stringify(pkg) }],
      'verify-command-changed',
    );
    expect(runHost(applyWithoutCrustCore(planted), ['npm', 'test', '--no-update-notifier']).status).toBe(0); // CONTROL
    const outcome = await verifyPlanted(planted, ['npm', 'test']);
    expect(outcome._tag).toBe('Failed');
    if (outcome._tag === 'Failed')
      expect(outcome.diagnosis.summary).toMatch(/exited 0 but the node-test summary reports 1 failed/);
  });

  it('a script that `npm test` reaches through another script counts too', async () => {
    const base = {
      ...NODE_PROJECT,
      'package.json': JSON.stringify({ type: 'module', scripts: { test: 'npm run unit', unit: 'node --test' } }),
    };
    const pkg = { type: 'module', scripts: { test: 'npm run unit', unit: 'echo skipped' } };
    const planted = await plantedNeedingPerson(
      base,
      [{ file: 'package.json', text: JSON.stringify(pkg) }],
      'verify-command-changed',
    );
    expect(runHost(applyWithoutCrustCore(planted), ['npm', 'test', '--no-update-notifier']).status).toBe(0); // CONTROL
  });
});

describe('files that shadow the runner or its modules', () => {
  const fakeUnittest = 'import sys\nprint("Ran 2 tests in 0.001s\\n\\nOK", file=sys.stderr)\nsys.exit(0)\n';

  it.each([
    ['unittest.py', 'unittest.py'],
    ['a unittest package', 'unittest/__main__.py'],
  ])(
    '%s: `python3 -m unittest` in the real verify sandbox passes without a fix; it needs a person',
    async (_what, file) => {
      const steps: Plant[] = [{ file, text: fakeUnittest }];
      if (file.includes('/')) steps.push({ file: 'unittest/__init__.py', text: '' });
      const planted = await plantedNeedingPerson(PY, steps, 'test-runner-shadowed');
      const argv = ['python3', '-m', 'unittest'] as const;
      expect(runHost(applyWithoutCrustCore(planted), [python, ...argv.slice(1)]).status).toBe(0); // CONTROL
      const outcome = await verifyPlanted(planted, argv, new Set([argvHash(argv)]));
      expect(outcome._tag).toBe('Verified'); // the verdict alone is fooled…
      if (outcome._tag === 'Verified') expect(needsApproval(outcome.verified.risks)).toBe(true); // …the policy is not
    },
  );

  it('a top-level pytest.py: `python -m pytest` runs it instead of pytest', async () => {
    const fake = 'print("2 passed in 0.01s")\n';
    const planted = await plantedNeedingPerson(PY, [{ file: 'pytest.py', text: fake }], 'test-runner-shadowed');
    const control = pytest(applyWithoutCrustCore(planted));
    expect(control.status).toBe(0);
    expect(control.output).toContain('2 passed');
  });

  it('node_modules/.bin/vitest: `npx vitest run` runs the planted binary', async () => {
    const fake = '#!/bin/sh\necho "      Tests  2 passed (2)"\nexit 0\n';
    const planted = await plantedNeedingPerson(
      NODE_PROJECT,
      [{ file: 'node_modules/.bin/vitest', text: fake, executable: true }],
      'test-runner-shadowed',
    );
    const control = runHost(applyWithoutCrustCore(planted), ['npx', '--no-install', 'vitest', 'run']);
    expect(control.status).toBe(0);
    expect(control.output).toContain('2 passed');
  });

  it('startup hooks and runner-named modules in other places, each named', async () => {
    const files = [
      'sitecustomize.py',
      'lib/usercustomize.py',
      'src/zz.pth',
      'src/_pytest/__init__.py',
      'packages/a/node_modules/jest/bin/jest.js',
      'Vitest/index.js',
    ];
    const planted = await plantedNeedingPerson(
      PY,
      files.map((file) => ({ file, text: 'x = 1\n' })),
      'test-runner-shadowed',
    );
    const paths = planted.patch.risks.find((r) => r.kind === 'test-runner-shadowed')?.paths ?? [];
    for (const file of files) expect(paths, file).toContain(file);
  });
});

describe('weakening files the runner discovers as tests (not named *.test.*)', () => {
  const NODE = {
    'package.json': JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }),
    'src/math.js': 'export const add = (a, b) => a - b;\n',
    'checks/test-math.mjs':
      "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { add } from '../src/math.js';\ntest('adds', () => { assert.equal(add(1, 2), 3); });\n",
  };

  it.each([
    ['deleting the assertion', "import { test } from 'node:test';\ntest('adds', () => {});\n"],
    ['it.skip-style skip', "import { test } from 'node:test';\ntest.skip('adds', () => { throw new Error('x'); });\n"],
    ['a return at the top', "import { test } from 'node:test';\ntest('adds', () => { return; });\n"],
  ])('node --test discovers checks/test-math.mjs; %s passes without a fix', async (_what, text) => {
    const planted = await plantedNeedingPerson(NODE, [{ file: 'checks/test-math.mjs', text }], 'tests-weakened');
    expect(runHost(applyWithoutCrustCore(planted), ['node', '--test']).status).toBe(0); // CONTROL
  });

  it('renaming the test away from the discovery pattern is weakening', async () => {
    const planted = await plantPatch(NODE, [
      { remove: 'checks/test-math.mjs' },
      { file: 'checks/math.mjs.txt', text: NODE['checks/test-math.mjs'] },
    ]);
    expect(riskKinds(planted.patch.risks)).toContain('tests-weakened');
    expect(runHost(applyWithoutCrustCore(planted), ['node', '--test']).status).toBe(0); // CONTROL
  });

  it('pytest python_files = check_*.py: a skip mark on checks/check_calc.py is weakening', async () => {
    const base = {
      'calc.py': PY['calc.py'],
      'pytest.ini': '[pytest]\npython_files = check_*.py\n',
      'checks/check_calc.py': 'from calc import double\n\n\ndef test_double():\n    assert double(4) == 8\n',
    };
    const skipped =
      'import pytest\nfrom calc import double\n\n\n@pytest.mark.skip\ndef test_double():\n    assert double(4) == 8\n';
    const planted = await plantedNeedingPerson(
      base,
      [{ file: 'checks/check_calc.py', text: skipped }],
      'tests-weakened',
    );
    const clone = applyWithoutCrustCore(planted);
    expect(runHost(clone, [python, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'checks']).status).toBe(0); // CONTROL
  });

  it('go t.Skip() in a _test.go file is weakening', async () => {
    const base = {
      'go.mod': 'module m\n',
      'm.go': 'package m\n',
      'm_test.go': 'package m\nimport "testing"\nfunc TestA(t *testing.T) { t.Fatal("x") }\n',
    };
    const planted = await plantPatch(base, [
      { file: 'm_test.go', text: 'package m\nimport "testing"\nfunc TestA(t *testing.T) { t.Skip() }\n' },
    ]);
    expect(riskKinds(planted.patch.risks)).toContain('tests-weakened');
  });
});

describe('exit 0 while the runner says tests failed', () => {
  const exitZero = 'import atexit, os\natexit.register(lambda: os._exit(0))\n\n\ndef double(x):\n    return x + 1\n';

  it('a source file that forces exit 0: unittest prints FAILED, exits 0; CrustCore fails the verification', async () => {
    const planted = await plantPatch(PY, [{ file: 'calc.py', text: exitZero }]);
    const argv = ['python3', '-m', 'unittest'] as const;
    const control = runHost(applyWithoutCrustCore(planted), [python, ...argv.slice(1)]);
    expect(control.status).toBe(0); // CONTROL: exit 0…
    expect(control.output).toMatch(/FAILED \(failures=1\)/); // …with a failure in the summary
    const outcome = await verifyPlanted(planted, argv, new Set([argvHash(argv)]));
    expect(outcome._tag).toBe('Failed');
    if (outcome._tag === 'Failed')
      expect(outcome.diagnosis.summary).toMatch(/exited 0 but the unittest summary reports 1 failed/);
  });

  it('the same trick under pytest (host control only: the sandbox has no pytest)', async () => {
    const planted = await plantPatch(PY, [{ file: 'calc.py', text: exitZero }]);
    const control = pytest(applyWithoutCrustCore(planted));
    expect(control.status).toBe(0);
    expect(control.output).toMatch(/1 failed/);
  });
});
