/**
 * The kernel must replay identically: it never reads a clock, randomness or I/O.
 * Biome's `style/noRestrictedGlobals` (override for packages/kernel/src in biome.json)
 * bans the globals; members such as `Math.random` are not globals, so this test
 * scans the source text for them, and proves the Biome rule actually fires.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repositoryRoot = fileURLToPath(new URL('../../../', import.meta.url));
const kernelSource = join(repositoryRoot, 'packages', 'kernel', 'src');

// Probe files carry the pid of the test process that wrote them, so two runs at once
// never collide and a leftover from a killed run can be told apart from a live one.
const probePattern = /^__lint_probe_(\d+)__\.ts$/;

const forbiddenPatterns: ReadonlyArray<{ readonly name: string; readonly pattern: RegExp }> = [
  { name: 'Math.random', pattern: /\bMath\s*(?:\.\s*random\b|\[\s*['"`]random['"`]\s*\])/ },
  { name: 'Date.now', pattern: /\bDate\s*\.\s*now\b/ },
  { name: 'new Date', pattern: /\bnew\s+Date\b/ },
  { name: 'performance.now', pattern: /\bperformance\s*\.\s*now\b/ },
  { name: 'getRandomValues', pattern: /\bgetRandomValues\b/ },
  { name: 'randomUUID', pattern: /\brandomUUID\b/ },
];

/** Crude on purpose: blanks block and line comments (keeping line numbers) so prose may name the banned calls. */
function stripComments(source: string): string {
  return source
    .replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ' '))
    .replace(/(^|[^:\\])\/\/.*$/gm, '$1');
}

function findForbiddenCalls(source: string): string[] {
  const found: string[] = [];
  stripComments(source)
    .split('\n')
    .forEach((line, index) => {
      for (const { name, pattern } of forbiddenPatterns) {
        if (pattern.test(line)) found.push(`line ${index + 1}: ${name}`);
      }
    });
  return found;
}

function kernelSourceFiles(): string[] {
  return readdirSync(kernelSource, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.ts') && !probePattern.test(path.split('/').pop() ?? ''))
    .map((path) => join(kernelSource, path));
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A run killed mid-test (SIGKILL skips `finally`) could leave its probe behind: remove it. */
function removeAbandonedProbes(): void {
  for (const name of readdirSync(kernelSource)) {
    const match = probePattern.exec(name);
    if (match?.[1] !== undefined && !isAlive(Number(match[1]))) rmSync(join(kernelSource, name), { force: true });
  }
}

describe('kernel determinism lint', () => {
  it('the scanner finds banned members in code but not in comments', () => {
    expect(findForbiddenCalls('const x = Math.random();\nconst y = Date.now();')).toEqual([
      'line 1: Math.random',
      'line 2: Date.now',
    ]);
    expect(findForbiddenCalls("const z = Math['random']; const u = globalThis.crypto.randomUUID();")).toEqual([
      'line 1: Math.random',
      'line 1: randomUUID',
    ]);
    expect(findForbiddenCalls('// Math.random is banned\n/* new Date() too */\nconst ok = 1;')).toEqual([]);
    expect(findForbiddenCalls('/* a\n * block\n */\nconst late = performance.now();')).toEqual([
      'line 4: performance.now',
    ]);
  });

  it('no kernel source file reads a clock or randomness through a member', () => {
    const files = kernelSourceFiles();
    expect(files.map((file) => relative(kernelSource, file))).toContain('index.ts');
    const violations = files.flatMap((file) =>
      findForbiddenCalls(readFileSync(file, 'utf8')).map((found) => `${relative(repositoryRoot, file)} ${found}`),
    );
    expect(violations).toEqual([]);
  });

  it('biome rejects a global clock read in kernel source', () => {
    removeAbandonedProbes();
    const probe = join(kernelSource, `__lint_probe_${process.pid}__.ts`);
    try {
      // Inside try: if the write fails half-way, finally still removes the file.
      writeFileSync(probe, 'export const t = Date.now();\n', { flag: 'wx' });
      const result = spawnSync(
        'npx',
        ['--no-install', 'biome', 'lint', '--colors=off', relative(repositoryRoot, probe)],
        {
          cwd: repositoryRoot,
          encoding: 'utf8',
          timeout: 60_000,
        },
      );
      const output = `${result.stdout}${result.stderr}`;
      expect(result.status, output).not.toBe(0);
      expect(output).toContain('lint/style/noRestrictedGlobals');
      expect(output).toContain('the kernel reads no clock, randomness or I/O');
    } finally {
      rmSync(probe, { force: true });
    }
  });
});
