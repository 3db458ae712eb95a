/**
 * The recording `crustcore demo --agent native` replays: a scripted model
 * fixes the demo's sample repository (packages/crustcore/src/demo/sample-repo.ts,
 * two bugs in src/calc.js, verified with `node --test`).
 *
 *   attempt 1: read src/calc.js and the test (in parallel), fix add(), claim done
 *              → CrustCore's verification fails on multiply
 *   attempt 2: read the diagnosis, fix multiply(), claim done → verified
 *
 * The same trajectory is checked in as golden/agent/demo-trajectory.json (a
 * test keeps the two identical).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Trajectory, writeTrajectoryFile } from '@crustcore/net';
import { scriptedTrajectory } from './trajectory-script.js';

export const DEMO_MODEL = 'crustcore-demo-recording';

export function demoTrajectory(): Trajectory {
  return scriptedTrajectory(
    [
      {
        text: "I'll read the code and its tests first.",
        calls: [
          { name: 'read_file', arguments: { path: 'src/calc.js' } },
          { name: 'read_file', arguments: { path: 'test/calc.test.js' } },
        ],
        usage: { inputTokens: 1_850, outputTokens: 60 },
      },
      {
        text: 'add() subtracts instead of adding. Fixing it.',
        calls: [
          {
            name: 'edit_file',
            arguments: { path: 'src/calc.js', oldText: '  return a - b;', newText: '  return a + b;', startLine: 3 },
          },
        ],
        usage: { inputTokens: 2_300, outputTokens: 70 },
      },
      {
        text: 'Fixed add(): it subtracted instead of adding. Done.',
        usage: { inputTokens: 2_400, outputTokens: 20 },
      },
      {
        text: 'The verifier reports that multiply() still fails: it adds instead of multiplying. Fixing it.',
        calls: [
          {
            name: 'edit_file',
            arguments: { path: 'src/calc.js', oldText: '  return a + b;', newText: '  return a * b;', startLine: 7 },
          },
        ],
        usage: { inputTokens: 3_100, outputTokens: 70 },
      },
      {
        text: 'Fixed multiply(): it added instead of multiplying. Both functions now match the tests.',
        usage: { inputTokens: 3_200, outputTokens: 25 },
      },
    ],
    DEMO_MODEL,
  );
}

/** Writes the demo trajectory to `directory/demo-trajectory.json` and returns the path (for `--replay`). */
export async function writeDemoTrajectory(directory: string): Promise<string> {
  mkdirSync(directory, { recursive: true });
  const path = join(directory, 'demo-trajectory.json');
  const written = await writeTrajectoryFile(path, demoTrajectory());
  if (written._tag === 'Left') throw new Error(written.left.message);
  return path;
}
