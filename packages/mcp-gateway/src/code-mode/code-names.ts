/**
 * The tools a code-mode script can call, and the names it calls them by: `tools.SERVER.TOOL`, each
 * part made a plain JavaScript identifier. Read from the registry's pins only (usable servers, tools
 * a person approved and did not deny), so listing them starts nothing. The same list serves the
 * stubs the model reads and the endpoint the script reaches: a name the stubs do not show cannot be
 * called.
 */
import type { GatewayCore } from '../gateway/gateway-core.js';

export interface CodeTool {
  /** The registered server and the tool's own name (what the gateway plans). */
  readonly server: string;
  readonly tool: string;
  /** The identifiers the script uses: `tools.<serverName>.<toolName>`. */
  readonly serverName: string;
  readonly toolName: string;
  /** The pinned (approved) definition: description and input schema. */
  readonly definition: { readonly description: string; readonly inputSchema: unknown };
}

/** Names that would change how the proxy objects behave (`await tools.x` calls a `then`). */
const RESERVED = new Set(['__proto__', 'constructor', 'prototype', 'then', 'toString', 'valueOf']);
const MAX_IDENTIFIER = 128;

/** `name` as an ASCII identifier: other characters become `_`, a leading digit gets `_`. */
export function identifierFor(name: string): string {
  let id = name.slice(0, MAX_IDENTIFIER).replace(/[^A-Za-z0-9_$]/g, '_');
  if (!/^[A-Za-z_$]/.test(id)) id = `_${id}`;
  return RESERVED.has(id) ? `${id}_` : id;
}

/** Gives each name its identifier, unique among `taken` (a clash gets `_2`, `_3`…). */
function uniqueIdentifier(name: string, taken: Set<string>): string {
  const base = identifierFor(name);
  let candidate = base;
  for (let n = 2; taken.has(candidate); n += 1) candidate = `${base}_${n}`;
  taken.add(candidate);
  return candidate;
}

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function pinnedDefinition(definition: unknown): CodeTool['definition'] {
  const fields = (typeof definition === 'object' && definition !== null ? definition : {}) as Record<string, unknown>;
  return {
    description: typeof fields.description === 'string' ? fields.description : '',
    inputSchema: fields.inputSchema ?? { type: 'object' },
  };
}

/** Every approved, not denied tool of every usable server, in a stable order. */
export function codeTools(gateway: GatewayCore): CodeTool[] {
  const servers = [...gateway.usableServers()].sort((a, b) => byName(a.name, b.name));
  const serverNames = new Set<string>();
  const tools: CodeTool[] = [];
  for (const record of servers) {
    const approved = Object.entries(record.tools)
      .filter(([, pin]) => pin.policy !== 'deny')
      .sort(([a], [b]) => byName(a, b));
    if (approved.length === 0) continue;
    const serverName = uniqueIdentifier(record.name, serverNames);
    const toolNames = new Set<string>();
    for (const [tool, pin] of approved) {
      const toolName = uniqueIdentifier(tool, toolNames);
      tools.push({ server: record.name, tool, serverName, toolName, definition: pinnedDefinition(pin.definition) });
    }
  }
  return tools;
}

/** The name the script's runner asks the endpoint for: `SERVER.TOOL` in identifiers. */
export const endpointName = (entry: CodeTool): string => `${entry.serverName}.${entry.toolName}`;
