/**
 * The demo trajectory, end to end through the kernel: a replayed model fixes
 * add() (verification fails on multiply), then uses the diagnosis to fix
 * multiply(); CrustCore verifies and applies.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { demoTrajectory } from '@crustcore/agent';
import { readTrajectoryFile } from '@crustcore/net';
import { describe, expect, it } from 'vitest';
import { CALC_REPO, DEMO_TRAJECTORY, makeBox, runNative } from './agent/harness.js';

describe('golden agent: demo trajectory', () => {
  it('the checked-in trajectory is the embedded one', async () => {
    const read = await readTrajectoryFile(DEMO_TRAJECTORY);
    expect(read._tag).toBe('Right');
    expect(read._tag === 'Right' ? read.right : null).toEqual(demoTrajectory());
  });

  it('fixes the sample repo in two attempts: the second uses the diagnosis; verified and applied', async () => {
    const box = makeBox(CALC_REPO);
    const { result, events } = await runNative(box, { replay: DEMO_TRAJECTORY });
    expect(result.outcome.kind, result.outcome.reason).toBe('completed');
    expect(result.outcome.attempts).toBe(2);
    const fixed = readFileSync(join(box.repo, 'src/calc.js'), 'utf8');
    expect(fixed).toContain('return a + b;');
    expect(fixed).toContain('return a * b;');
    expect(result.inspect?.ok).toBe(true);
    const ends = events.filter((e) => e.type === 'attempt_end');
    expect(ends.map((e) => (e.type === 'attempt_end' ? e.selfClaimedDone : null))).toEqual([true, true]);
  });
});
