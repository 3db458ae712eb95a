/**
 * Guesses the verify command of a checkout from its build files. Only reads
 * files (bounded); never runs anything. The result is an argv, never a shell
 * line, and says which file it came from so the user can see why.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Argv } from './argv.js';

export interface DetectedVerifyCommand {
  readonly argv: Argv;
  /** The file that decided it, relative to the checked directory. */
  readonly source: string;
  readonly runner: 'npm' | 'pytest' | 'cargo' | 'go' | 'make';
}

const MAX_MANIFEST_BYTES = 1024 * 1024;
// `npm init` writes this placeholder; it is not a test suite.
const NPM_PLACEHOLDER = /no test specified/;

async function readSmall(path: string): Promise<string | null> {
  try {
    const info = await stat(path);
    if (!info.isFile() || info.size > MAX_MANIFEST_BYTES) return null;
    return await readFile(path, 'utf8');
  } catch {
    return null;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

function npmTestScript(text: string): string | null {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null) return null;
    const scripts = (parsed as { scripts?: unknown }).scripts;
    if (typeof scripts !== 'object' || scripts === null) return null;
    const test = (scripts as { test?: unknown }).test;
    return typeof test === 'string' && test.trim() !== '' && !NPM_PLACEHOLDER.test(test) ? test : null;
  } catch {
    return null;
  }
}

async function hasPythonTests(dir: string): Promise<boolean> {
  try {
    const names = await readdir(join(dir, 'tests'));
    return names.some((name) => name.endsWith('.py'));
  } catch {
    return false;
  }
}

async function detectPytest(dir: string): Promise<string | null> {
  if (await exists(join(dir, 'pytest.ini'))) return 'pytest.ini';
  const pyproject = await readSmall(join(dir, 'pyproject.toml'));
  if (pyproject !== null && /\[tool\.pytest/.test(pyproject)) return 'pyproject.toml';
  const setupCfg = await readSmall(join(dir, 'setup.cfg'));
  if (setupCfg !== null && /\[tool:pytest\]/.test(setupCfg)) return 'setup.cfg';
  if (await hasPythonTests(dir)) return 'tests/';
  if (pyproject !== null) return 'pyproject.toml';
  return null;
}

/**
 * Order: package.json `scripts.test` → npm test; pytest markers → python3 -m pytest;
 * Cargo.toml → cargo test; go.mod → go test ./...; Makefile with a `test:` target → make test.
 * Returns null when nothing matches: the caller must then ask for `--verify`.
 */
export async function detectVerifyCommand(dir: string): Promise<DetectedVerifyCommand | null> {
  const pkg = await readSmall(join(dir, 'package.json'));
  if (pkg !== null && npmTestScript(pkg) !== null) {
    return { argv: ['npm', 'test'], source: 'package.json', runner: 'npm' };
  }
  const pytest = await detectPytest(dir);
  if (pytest !== null) return { argv: ['python3', '-m', 'pytest'], source: pytest, runner: 'pytest' };
  if (await exists(join(dir, 'Cargo.toml'))) return { argv: ['cargo', 'test'], source: 'Cargo.toml', runner: 'cargo' };
  if (await exists(join(dir, 'go.mod'))) return { argv: ['go', 'test', './...'], source: 'go.mod', runner: 'go' };
  for (const name of ['Makefile', 'makefile', 'GNUmakefile']) {
    const text = await readSmall(join(dir, name));
    if (text !== null && /^test\s*:/m.test(text)) return { argv: ['make', 'test'], source: name, runner: 'make' };
  }
  return null;
}
