/**
 * Limits that hold without breaking the runtimes tests use. The old 16 GiB
 * RLIMIT_AS killed vitest 4 in the verify sandbox (V8 reserves large
 * WebAssembly regions it never touches); the CONTROL reproduces that on the
 * host with `prlimit --as`. A tiny project in a temp directory (vitest and
 * typescript hard-linked from this monorepo's node_modules) must then pass
 * vitest, tsc and `node --test` inside the verify profile — and a memory hog
 * must still be stopped: one process by RLIMIT_DATA, several processes
 * together by the run's memory cgroup (as root), each with a host control
 * where the same hog gets its memory.
 */
import {
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import {
  mintSandboxExecCap,
  runSandboxed,
  runTrustedHostCommand,
  type SandboxCapOptions,
  type SandboxedResult,
} from '@crustcore/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const monorepoModules = resolve(import.meta.dirname, '..', 'node_modules');
const project = mkdtempSync(join(tmpdir(), 'crustcore-redteam-runtimes-'));
afterAll(() => rmSync(project, { recursive: true, force: true }));
const isRoot = process.getuid?.() === 0;
const MiB = 1024 * 1024;

/** Package directories `names` need, following dependencies the way Node resolves them here. */
function dependencyClosure(names: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const visit = (name: string, from: string): void => {
    const dir = [join(from, 'node_modules', name), join(monorepoModules, name)].find((candidate) =>
      existsSync(join(candidate, 'package.json')),
    );
    if (dir === undefined || seen.has(dir)) return;
    seen.add(dir);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
    const fields = ['dependencies', 'optionalDependencies', 'peerDependencies'] as const;
    for (const field of fields) for (const dep of Object.keys(manifest[field] ?? {})) visit(dep, dir);
  };
  for (const name of names) visit(name, monorepoModules);
  return seen;
}

/** Hard links when the file system allows (same device), else copies. */
function linkTree(source: string, target: string): void {
  const stat = lstatSync(source);
  if (stat.isSymbolicLink()) {
    symlinkSync(readlinkSync(source), target);
    return;
  }
  if (stat.isDirectory()) {
    mkdirSync(target, { recursive: true });
    for (const entry of readdirSync(source)) linkTree(join(source, entry), join(target, entry));
    return;
  }
  try {
    linkSync(source, target);
  } catch {
    copyFileSync(source, target);
  }
}

function writeProject(): void {
  for (const dir of dependencyClosure(['vitest', 'typescript'])) {
    const path = relative(monorepoModules, dir);
    // Nested node_modules come along with their parent package.
    if (!path.includes('node_modules')) linkTree(dir, join(project, 'node_modules', path));
  }
  mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
  symlinkSync('../vitest/vitest.mjs', join(project, 'node_modules', '.bin', 'vitest'));
  symlinkSync('../typescript/bin/tsc', join(project, 'node_modules', '.bin', 'tsc'));
  const files: Record<string, string> = {
    'package.json': JSON.stringify({ name: 'tiny', private: true, type: 'module', scripts: { test: 'vitest run' } }),
    'vitest.config.mjs': "export default { test: { include: ['test/**/*.test.ts'] } };\n",
    'src/sum.ts': 'export const sum = (a: number, b: number): number => a + b;\n',
    'test/sum.test.ts':
      "import { expect, it } from 'vitest';\nimport { sum } from '../src/sum.js';\nit('adds', () => expect(sum(2, 3)).toBe(5));\n",
    'tsconfig.json': JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, module: 'nodenext', target: 'es2022', skipLibCheck: true },
      include: ['src'],
    }),
    'bad/tsconfig.json': JSON.stringify({ compilerOptions: { strict: true, noEmit: true }, include: ['bad.ts'] }),
    'bad/bad.ts': 'export const n: number = "not a number";\n',
    'node-test/sum.test.mjs':
      "import { test } from 'node:test';\nimport assert from 'node:assert';\ntest('adds', () => assert.strictEqual(2 + 3, 5));\n",
    // One process taking 768 MiB, touched (filled) so it is really used.
    'hog/hog.test.mjs':
      "import { test } from 'node:test';\ntest('hog', () => { const parts = []; for (let i = 0; i < 96; i++) parts.push(Buffer.alloc(8 << 20, 1)); console.log('ALLOCATED', parts.length * 8); });\n",
    // Four processes of 200 MiB each: every one under a 512 MiB per-process limit, together far above it.
    'hog/many.mjs': `import { spawn } from 'node:child_process';
const child = "const p = []; for (let i = 0; i < 25; i++) p.push(Buffer.alloc(8 << 20, 1)); process.stdout.write('held\\\\n'); setInterval(() => {}, 1e6);";
const kids = []; let held = 0; let done = false;
const finish = (line, code) => { if (done) return; done = true; console.log(line); for (const k of kids) k.kill('SIGKILL'); process.exitCode = code; };
for (let i = 0; i < 4; i++) {
  const kid = spawn(process.execPath, ['-e', child], { stdio: ['ignore', 'pipe', 'inherit'] });
  kids.push(kid);
  kid.stdout.on('data', (d) => { held += String(d).split('\\n').filter(Boolean).length; if (held === 4) finish('ALL-HELD', 0); });
  kid.on('exit', (code, signal) => { if (signal !== null) finish('KILLED ' + signal, 1); else if (code !== 0) finish('FAILED ' + code, 1); });
}
`,
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(project, path, '..'), { recursive: true });
    writeFileSync(join(project, path), text);
  }
}

beforeAll(writeProject);

async function verify(
  argv: [string, ...string[]],
  options: SandboxCapOptions = {},
  cwd = project,
): Promise<SandboxedResult> {
  const cap = mintSandboxExecCap('verify', options);
  if (cap._tag === 'Left') throw new Error(cap.left.message);
  const run = await runSandboxed(cap.right, { argv, worktreeRoot: project, cwd, timeoutMs: 170_000 });
  if (run._tag === 'Left') throw new Error(`refused: ${run.left.message}`);
  expect(run.right.timedOut).toBe(false);
  return run.right;
}

const host = (argv: [string, ...string[]]) =>
  runTrustedHostCommand({
    argv,
    cwd: project,
    env: { PATH: `${resolve(process.execPath, '..')}:/usr/bin:/bin`, HOME: project, NO_COLOR: '1' },
    timeoutMs: 170_000,
    maxOutputBytes: 4 << 20,
  });

describe('redteam: runtimes under the sandbox limits', () => {
  it('CONTROL: the old 16 GiB address-space limit breaks vitest on the host', async () => {
    const run = await host([
      '/usr/bin/prlimit',
      `--as=${16 * 1024 * MiB}`,
      '--',
      process.execPath,
      'node_modules/vitest/vitest.mjs',
      'run',
    ]);
    expect(run.exitCode).not.toBe(0);
    expect(run.stdout.text + run.stderr.text).toContain('WebAssembly.instantiate(): Out of memory');
  }, 180_000);

  it('vitest (npm test) passes inside the verify profile', async () => {
    const run = await verify(['npm', 'test']);
    expect(run.exitCode, run.stdout.text + run.stderr.text).toBe(0);
    expect(run.stdout.text).toMatch(/Tests\s+1 passed/);
    expect(run.memoryLimit).toBe(isRoot ? 'memory-cgroup' : 'rlimit-data');
  }, 180_000);

  it('tsc type-checks inside the verify profile (and reports a real type error)', async () => {
    const good = await verify(['npx', '--no-install', 'tsc', '-p', 'tsconfig.json']);
    expect(good.exitCode, good.stdout.text + good.stderr.text).toBe(0);
    const bad = await verify(['npx', '--no-install', 'tsc', '-p', 'bad/tsconfig.json']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stdout.text).toContain('error TS2322');
  }, 180_000);

  it('node --test passes inside the verify profile', async () => {
    const run = await verify(['node', '--test', 'node-test/']);
    expect(run.exitCode, run.stdout.text + run.stderr.text).toBe(0);
    expect(run.stdout.text).toContain('# pass 1');
  }, 180_000);

  it('stops a single-process memory hog at the per-process limit (control: the host lets it allocate)', async () => {
    const control = await host([process.execPath, '--test', 'hog/hog.test.mjs']);
    expect(control.stdout.text, control.stderr.text).toContain('ALLOCATED 768');
    const run = await verify(['node', '--test', 'hog/hog.test.mjs'], { limits: { memoryBytes: 512 * MiB } });
    expect(run.exitCode).not.toBe(0);
    expect(run.stdout.text).not.toContain('ALLOCATED');
    expect(run.stdout.text + run.stderr.text).toMatch(/allocation failed|out of memory/i);
  }, 180_000);

  it('as root, caps the whole run: four 200 MiB processes under a 512 MiB run limit (control: the host holds all four)', async () => {
    const control = await host([process.execPath, 'hog/many.mjs']);
    expect(control.stdout.text, control.stderr.text).toContain('ALL-HELD');
    const run = await verify(['node', 'hog/many.mjs'], { limits: { memoryBytes: 512 * MiB } });
    if (!isRoot) {
      // Without a cgroup only each process is bounded (documented in docs/sandbox.md).
      expect(run.memoryLimit).toBe('rlimit-data');
      return;
    }
    expect(run.memoryLimit).toBe('memory-cgroup');
    expect(run.stdout.text).not.toContain('ALL-HELD');
    expect(run.oomKills).toBeGreaterThanOrEqual(1);
  }, 180_000);
});
