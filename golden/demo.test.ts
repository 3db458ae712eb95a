/**
 * `crustcore demo`, the first thing a newcomer runs: the whole loop on a
 * sample repository (attempt 1 fails verification, the diagnosis goes back,
 * attempt 2 passes, approval, atomic apply, inspect + replay), as narrated
 * text without colors when not on a terminal, and as one JSON document.
 */
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { baseEnv, cli, tempDir } from './daemon-harness.js';

const homes: string[] = [];
afterAll(() => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

function freshEnv(): NodeJS.ProcessEnv {
  const home = tempDir('crustcore-demo-test-');
  homes.push(home);
  // NO_COLOR unset on purpose: colors must still stay off, since stdout is not a terminal.
  const { NO_COLOR: _unused, ...env } = baseEnv(home);
  return env;
}

describe('golden: crustcore demo', () => {
  it('--json: completed in two attempts, applied, the log intact and replayed', () => {
    const run = cli(freshEnv(), ['demo', '--json']);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.json).toMatchObject({ ok: true, outcome: 'completed', attempts: 2 });
    const inspect = run.json?.inspect as { ok: boolean; replay: { events: number; unanswered: unknown[] } };
    expect(inspect.ok).toBe(true);
    expect(inspect.replay.events).toBeGreaterThan(5);
    expect(inspect.replay.unanswered).toEqual([]);
    const fixed = readFileSync(join(String(run.json?.repo), 'src/calc.js'), 'utf8');
    expect(fixed).toContain('return a + b;');
    expect(fixed).toContain('return a * b;');
    // The state it names is a real ledger the CLI can check again.
    expect(cli(freshEnv(), ['inspect', '--dir', String(run.json?.stateDir), '--replay']).status).toBe(0);
    homes.push(dirname(String(run.json?.repo)));
  }, 120_000);

  it('narrates the story in order, with no escape codes off a terminal, and says what to do next', () => {
    const run = cli(freshEnv(), ['demo']);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).not.toContain('\u001b[');
    const story = [
      '→ attempt 1',
      '✗ not verified',
      '→ attempt 2 (with the diagnosis of the last failure)',
      '✓ verified in a fresh worktree',
      'approval granted',
      '✓ applied atomically',
      'intact:',
      'Next:',
    ];
    const kept = /state kept in (\S+)/.exec(run.stdout)?.[1];
    if (kept !== undefined) homes.push(kept);
    let at = 0;
    for (const step of story) {
      const found = run.stdout.indexOf(step, at);
      expect(found, `"${step}" after position ${at} in:\n${run.stdout}`).toBeGreaterThanOrEqual(0);
      at = found + step.length;
    }
  }, 120_000);
});
