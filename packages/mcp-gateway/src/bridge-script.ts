/**
 * Where the in-sandbox stdio bridge is on the host. It ships as a plain file
 * next to `src/` and `dist/` (assets/stdio-bridge.mjs); this module sits
 * directly in `src/` so the same relative URL works from the bundle.
 */
import { fileURLToPath } from 'node:url';

export const STDIO_BRIDGE_PATH = fileURLToPath(new URL('../assets/stdio-bridge.mjs', import.meta.url));
