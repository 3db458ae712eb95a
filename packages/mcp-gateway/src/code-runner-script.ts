/**
 * Where code mode's in-sandbox runner is on the host. It ships as a plain file next to `src/` and
 * `dist/` (assets/code-runner.mjs); this module sits directly in `src/` so the same relative URL
 * works from the bundle.
 */
import { fileURLToPath } from 'node:url';

export const CODE_RUNNER_PATH = fileURLToPath(new URL('../assets/code-runner.mjs', import.meta.url));
