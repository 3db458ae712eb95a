/**
 * A run's observer hears what happens as it happens: `started` once the
 * process is spawned, and each new output total per stream. The observer is
 * told, never asked: the result is the same with or without it. Asserted on
 * order and totals only; nothing here reads a clock.
 */
import { describe, expect, it } from 'vitest';
import { runTrustedHostCommand } from '../src/index.js';

const base = { cwd: '/tmp', env: { PATH: '/usr/bin:/bin' }, timeoutMs: 30_000, maxOutputBytes: 1 << 10 } as const;

describe('the run observer', () => {
  it('hears the start before any output, and running totals that end at every byte written', async () => {
    const heard: string[] = [];
    const totals = { stdout: [] as number[], stderr: [] as number[] };
    // More than the capture budget, so the totals count dropped bytes too.
    const script = 'head -c 5000 /dev/zero; echo err >&2; head -c 3000 /dev/zero';
    const observed = await runTrustedHostCommand({
      ...base,
      argv: ['/bin/sh', '-c', script],
      observer: {
        started: () => heard.push('started'),
        output: (stream, total) => {
          heard.push(stream);
          totals[stream].push(total);
        },
      },
    });
    expect(heard[0]).toBe('started');
    expect(heard.filter((e) => e === 'started')).toHaveLength(1);
    expect(totals.stdout).toEqual([...totals.stdout].sort((a, b) => a - b));
    expect(totals.stdout.at(-1)).toBe(8_000);
    expect(totals.stdout.at(-1)).toBe(observed.stdout.totalBytes);
    expect(totals.stderr.at(-1)).toBe(4);
    const plain = await runTrustedHostCommand({ ...base, argv: ['/bin/sh', '-c', script] });
    expect(plain.stdout.sha256).toBe(observed.stdout.sha256);
    expect(plain.exitCode).toBe(observed.exitCode);
  });

  it('a program that cannot start is never reported as started', async () => {
    let started = false;
    const missing = await runTrustedHostCommand({
      ...base,
      argv: ['/no/such/program'],
      observer: { started: () => (started = true) },
    });
    expect(missing.startError).not.toBeNull();
    expect(started).toBe(false);
  });
});
