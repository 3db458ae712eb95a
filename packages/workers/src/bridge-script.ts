/**
 * Where the in-sandbox bridge scripts are on the host. It ships as a plain
 * file next to `src/` and `dist/` (see assets/bridge.mjs); this module sits
 * at the same depth as the built `dist/index.js`, so one relative URL works
 * whether the package runs from source or from its build.
 */
import { fileURLToPath } from 'node:url';

/** Host path of `assets/bridge.mjs`, bound read-only into every worker sandbox. */
export const BRIDGE_SCRIPT_PATH = fileURLToPath(new URL('../assets/bridge.mjs', import.meta.url));

/** Host path of `assets/mcp-bridge.mjs`: the stdio MCP server a worker CLI starts, joined to a CrustCore endpoint. */
export const MCP_BRIDGE_SCRIPT_PATH = fileURLToPath(new URL('../assets/mcp-bridge.mjs', import.meta.url));
