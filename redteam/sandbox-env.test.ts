/**
 * Attacks through the environment: a planted LD_PRELOAD library, a PATH
 * entry into the worktree that shadows `node`, and 200 secret-looking host
 * variables. Controls prove each attack works without the sandbox.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  mintSandboxExecCap,
  runSandboxed,
  runTrustedHostCommand,
  type SandboxedResult,
  type SandboxProfileName,
  type SandboxRunSpec,
} from '@crustcore/sandbox';
import { afterAll, describe, expect, it } from 'vitest';

const worktree = mkdtempSync(join(tmpdir(), 'crustcore-redteam-env-'));
const planted: string[] = [];

afterAll(() => {
  for (const name of planted) delete process.env[name];
  rmSync(worktree, { recursive: true, force: true });
});

async function attack(
  profile: SandboxProfileName,
  spec: Omit<SandboxRunSpec, 'worktreeRoot' | 'cwd'>,
): Promise<SandboxedResult> {
  const cap = mintSandboxExecCap(profile);
  if (cap._tag === 'Left') throw new Error(cap.left.message);
  const result = await runSandboxed(cap.right, { ...spec, worktreeRoot: worktree, cwd: worktree, timeoutMs: 30_000 });
  if (result._tag === 'Left') throw new Error(`refused: ${result.left.reason}: ${result.left.message}`);
  expect(result.right.backend).toBe('bubblewrap');
  return result.right;
}

function plant(name: string, value: string): void {
  process.env[name] = value;
  planted.push(name);
}

describe('redteam: sandbox environment', () => {
  it('a planted LD_PRELOAD library runs on the host but not in the sandbox', async () => {
    const source = join(worktree, 'evil.c');
    const library = join(worktree, 'evil.so');
    writeFileSync(
      source,
      '#include <unistd.h>\n__attribute__((constructor)) static void pwn(void) { write(1, "PWNED-PRELOAD\\n", 14); }\n',
    );
    const built = await runTrustedHostCommand({
      argv: ['/usr/bin/gcc', '-shared', '-fPIC', '-o', library, source],
      cwd: worktree,
      env: { PATH: '/usr/bin:/bin' },
      timeoutMs: 60_000,
      maxOutputBytes: 65_536,
    });
    expect(built.exitCode, built.stderr.text).toBe(0);
    const control = await runTrustedHostCommand({
      argv: ['/bin/true'],
      cwd: worktree,
      env: { LD_PRELOAD: library },
      timeoutMs: 10_000,
      maxOutputBytes: 65_536,
    });
    expect(control.stdout.text).toContain('PWNED-PRELOAD');

    plant('LD_PRELOAD', library);
    const result = await attack('build', {
      argv: ['sh', '-c', 'echo "preload=[$LD_PRELOAD]"; /bin/true'],
      env: { LD_PRELOAD: library, LD_LIBRARY_PATH: worktree },
    });
    expect(result.stdout.text).toBe('preload=[]\n');
    expect(result.envDropped.map((entry) => entry.name).sort()).toEqual(['LD_LIBRARY_PATH', 'LD_PRELOAD']);
  });

  it('a PATH entry into the worktree cannot shadow node', async () => {
    mkdirSync(join(worktree, 'bin'), { recursive: true });
    const fake = join(worktree, 'bin', 'node');
    writeFileSync(fake, '#!/bin/sh\necho PWNED-PATH\n');
    chmodSync(fake, 0o755);
    const control = await runTrustedHostCommand({
      argv: ['node', '--version'],
      cwd: worktree,
      env: { PATH: `${join(worktree, 'bin')}:/usr/bin:/bin` },
      timeoutMs: 10_000,
      maxOutputBytes: 65_536,
    });
    expect(control.stdout.text).toBe('PWNED-PATH\n');

    const result = await attack('verify', {
      argv: ['node', '--test'],
      env: { PATH: `${join(worktree, 'bin')}:/usr/bin:/bin` },
    });
    expect(result.stdout.text).not.toContain('PWNED-PATH');
    expect(result.exitCode).toBe(0);
    expect(result.envDropped).toContainEqual(expect.objectContaining({ name: 'PATH', reason: 'BadPathList' }));
  });

  it('200 secret-looking host variables: none visible inside, even when forwarded', async () => {
    const shapes = [
      (i: number) => [`SERVICE_${i}_TOKEN`, `tok-${i}-value-plain`],
      (i: number) => [`AWS_SECRET_ACCESS_KEY_${i}`, `aws${i}secretvalue`],
      (i: number) => [`DB_PASSWORD_${i}`, `hunter${i}-crustcore-rt`],
      (i: number) => [`VITEST_LOOKS_HARMLESS_${i}`, `ghp_${'a'.repeat(20)}${String(i).padStart(16, '0')}`],
      (i: number) => [`CI_STEP_${i}`, `sk-${'Q'.repeat(10)}${i}x${'z'.repeat(12)}`],
      (i: number) => [`MY_API_KEY_${i}`, `k${i}-crustcore-rt`],
      (i: number) => [`GITHUB_TOKEN_${i}`, `gh${i}-crustcore-rt`],
      (i: number) => [`NPM_TOKEN_${i}`, `npm_${'b'.repeat(30)}${String(i).padStart(6, '0')}`],
    ];
    const forwarded: Record<string, string> = {};
    for (let i = 0; i < 200; i++) {
      const [name, value] = (shapes[i % shapes.length] as (i: number) => string[])(i) as [string, string];
      plant(name, value);
      forwarded[name] = value;
    }
    const result = await attack('build', {
      argv: [
        'sh',
        '-c',
        '/usr/bin/env; node -e "console.log(JSON.stringify(process.env))"; cat /proc/self/environ | tr "\\0" "\\n"',
      ],
      env: forwarded,
    });
    expect(result.exitCode).toBe(0);
    const visible = Object.entries(forwarded).filter(
      ([name, value]) => result.stdout.text.includes(name) || result.stdout.text.includes(value),
    );
    expect(visible).toEqual([]);
    expect(result.envDropped).toHaveLength(200);
    // Nor does any value reach the report of what was dropped.
    const report = JSON.stringify(result.envDropped);
    expect(Object.values(forwarded).filter((value) => report.includes(value))).toEqual([]);
  });
});
