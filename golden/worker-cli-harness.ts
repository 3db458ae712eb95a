/**
 * What the golden tests of `crustcore run --backend codex|claude` share: which provider wire each
 * real CLI speaks to the scripted model, the variable its key is read from, and the CLI's
 * environment for a run against the scripted provider.
 */
import type { WorkerCliName } from '../packages/workers/src/index.js';
import { TEST_API_KEY } from '../packages/workers/test/worker-harness.js';
import { baseEnv } from './daemon-harness.js';

export const WIRE = { codex: 'openai-responses', claude: 'anthropic-messages' } as const;
export const KEY_VARIABLE = { codex: 'OPENAI_API_KEY', claude: 'ANTHROPIC_API_KEY' } as const;
export const CLIS: readonly WorkerCliName[] = ['codex', 'claude'];

export const FIX_ADD = "sed -i 's/a - b/a + b/' src/math.js";
export const DONE = 'Fixed add().\n{"summary":"add() adds","done":true,"commands_run":["node --test"],"risks":[]}';

/** The CLI's environment for a worker talking to `origin`: the key in the variable its CLI reads. */
export const workerEnv = (name: WorkerCliName, home: string, origin: string): NodeJS.ProcessEnv => ({
  ...baseEnv(home),
  [KEY_VARIABLE[name]]: TEST_API_KEY,
  [`CRUSTCORE_${name.toUpperCase()}_UPSTREAM`]: origin,
});
