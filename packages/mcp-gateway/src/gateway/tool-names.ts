/**
 * How gateway tools are named for the model and what each call is for the
 * kernel. `mcp__SERVER__TOOL` cannot collide with a native tool (none has
 * `__`). The operation encodes the person's policy: `allow` tools are an
 * `exec` in the `mcp` profile (the kernel's risk profile decides, like any
 * command); `ask` tools are a `net.connect` to `mcp://SERVER/TOOL` —
 * irreversible, so the kernel asks a person in every profile and denies when
 * no one can answer (INVARIANTS 14). The kernel has no `mcp.call` operation
 * yet; see docs/mcp-gateway.md.
 */
import type { Operation } from '@crustcore/kernel';
import type { ToolPolicy } from '../registry/server-record.js';

export const SEARCH_TOOL = 'mcp_search';
export const DESCRIBE_TOOL = 'mcp_describe';
const PREFIX = 'mcp__';

export const gatewayToolName = (server: string, tool: string): string => `${PREFIX}${server}__${tool}`;

/** `mcp__SERVER__TOOL` → its parts, or null. Server names have no `__`... but may have `_`: split at the first `__`. */
export function parseGatewayToolName(name: string): { readonly server: string; readonly tool: string } | null {
  if (!name.startsWith(PREFIX)) return null;
  const rest = name.slice(PREFIX.length);
  const split = rest.indexOf('__');
  if (split <= 0 || split + 2 >= rest.length) return null;
  return { server: rest.slice(0, split), tool: rest.slice(split + 2) };
}

export const metaOperation = (argv: readonly string[]): Operation => ({
  op: 'exec',
  argv: ['mcp', ...argv],
  cwd: '.',
  profile: 'mcp',
  recognizedRunner: false,
});

export function callOperation(server: string, tool: string, policy: ToolPolicy): Operation {
  if (policy === 'allow') return metaOperation([server, tool]);
  return { op: 'net.connect', host: `mcp://${server}/${tool}`, port: 0 };
}
