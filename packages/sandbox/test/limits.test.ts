import { describe, expect, it } from 'vitest';
import { SANDBOX_PROFILES } from '../src/index.js';
import { prlimitArgv } from '../src/limits/prlimit-argv.js';
import { countUserTasks } from '../src/limits/user-tasks.js';

describe('prlimitArgv', () => {
  const limits = SANDBOX_PROFILES.hostile.limits;

  it('sets data memory (never address space), CPU (soft:hard), file size, open files and no core dumps', () => {
    expect(prlimitArgv('/usr/bin/prlimit', limits, null)).toEqual([
      '/usr/bin/prlimit',
      `--data=${limits.memoryBytes}`,
      `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 5}`,
      `--fsize=${limits.fileSizeBytes}`,
      `--nofile=${limits.openFiles}`,
      '--core=0',
      '--',
    ]);
  });

  it('adds --nproc only when given a budget (never as root)', () => {
    expect(prlimitArgv('/usr/bin/prlimit', limits, 80)).toContain('--nproc=80');
    expect(prlimitArgv('/usr/bin/prlimit', limits, null).some((arg) => arg.startsWith('--nproc'))).toBe(false);
  });
});

describe('countUserTasks', () => {
  it('counts this process and its threads for our uid, nothing for an unused uid', () => {
    expect(countUserTasks(process.getuid?.() ?? 0)).toBeGreaterThanOrEqual(1);
    expect(countUserTasks(4_000_000_000)).toBe(0);
  });
});
