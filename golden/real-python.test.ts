/**
 * A Python package tested with pytest from the project's own virtual
 * environment (PyPI is not reachable here: the venv is made with
 * --system-site-packages over Debian's python3-pytest, and the project's
 * one "installed" dependency lives only in the venv). Verify must use the
 * venv's interpreter — the host's first python3 on PATH (pyenv, /usr/bin)
 * cannot import it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { buildCli, makeRepo, type Sandbox } from './cli-harness.js';
import { crustcoreWith } from './real-harness.js';

vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

let box: Sandbox;

beforeAll(() => {
  buildCli();
  box = makeRepo({
    '.gitignore': '.venv/\n__pycache__/\n.pytest_cache/\n',
    'pyproject.toml': '[project]\nname = "shop"\nversion = "0.1.0"\ndependencies = ["pricing-rules"]\n',
    'shop/__init__.py': '',
    'shop/cart.py':
      'from pricing_rules import discount\n\n\ndef total(prices):\n    return discount(sum(prices)) + 1\n',
    'tests/test_cart.py': 'from shop.cart import total\n\n\ndef test_total():\n    assert total([10, 20]) == 27\n',
  });
  execFileSync('/usr/bin/python3', ['-m', 'venv', '--system-site-packages', '.venv'], { cwd: box.repo });
  const lib = join(box.repo, '.venv', 'lib');
  const python = readdirSync(lib).find((name) => name.startsWith('python')) as string;
  // The project's dependency, installed only in the venv (as `pip install` would put it there).
  writeFileSync(
    join(lib, python, 'site-packages', 'pricing_rules.py'),
    'def discount(amount):\n    return amount * 9 // 10\n',
  );
});

describe('golden: pytest in the project venv', () => {
  it('control: the host python3 cannot import the venv-only dependency; the venv can, and the test fails on the base', () => {
    expect(() =>
      execFileSync('/usr/bin/python3', ['-c', 'import pricing_rules'], { cwd: box.repo, stdio: 'pipe' }),
    ).toThrow();
    const base = (() => {
      try {
        execFileSync(join(box.repo, '.venv/bin/python'), ['-m', 'pytest', '-q'], { cwd: box.repo, stdio: 'pipe' });
        return 0;
      } catch (error) {
        return (error as { status: number }).status;
      }
    })();
    expect(base).toBe(1);
  });

  it('bug → worker fix → verified with python -m pytest from the venv → applied', () => {
    const run = crustcoreWith(
      box,
      [
        'run',
        '--goal',
        'fix total',
        '--verify',
        'python -m pytest -q',
        '--worker',
        `sh -c "sed -i 's/ + 1//' shop/cart.py"`,
        '--approve',
        'auto',
        '--json',
      ],
      {},
    );
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(readFileSync(join(box.repo, 'shop/cart.py'), 'utf8')).not.toContain('+ 1');
    expect(existsSync(join(box.repo, '.venv/pyvenv.cfg'))).toBe(true);
  });

  it('control: with --no-environment the system python3 (with its pytest) cannot import the dependency', () => {
    // Back to the broken base (the previous task applied its fix to the working tree).
    execFileSync('git', ['checkout', '-q', '--', 'shop/cart.py'], { cwd: box.repo });
    const run = crustcoreWith(
      box,
      [
        'run',
        '--goal',
        'fix total',
        '--verify',
        'python3 -m pytest -q',
        '--worker',
        `sh -c "sed -i 's/ + 1//' shop/cart.py"`,
        '--approve',
        'auto',
        '--json',
        '--no-environment',
        '--max-revisits',
        '0',
      ],
      {},
    );
    expect(run.status).not.toBe(0);
    expect(run.stdout + run.stderr).toMatch(/pricing_rules|ModuleNotFoundError|No module named|missing-module/);
    expect(readFileSync(join(box.repo, 'shop/cart.py'), 'utf8')).toContain('+ 1');
  });
});
