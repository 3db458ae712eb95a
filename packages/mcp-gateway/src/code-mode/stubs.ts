/**
 * Typed stubs for code mode, generated from the pinned input schemas (what a person approved,
 * not what a server says now): one line per tool,
 *
 *   tools.files.read_text_file(args: { path: string; head?: number }): Promise<string>;
 *
 * Everything in a stub but the fixed words comes from the server (its tool and property names,
 * enum values, the description in the comment), so stubs reach the model redacted and wrapped as
 * untrusted data, like a description.
 */
import type { ToolExecution } from '@crustcore/agent';
import type { GatewayCore } from '../gateway/gateway-core.js';
import { GATEWAY_DEFAULTS, textExecution } from '../gateway/mcp-gateway-options.js';
import { type CodeTool, codeTools } from './code-names.js';
import { schemaType } from './schema-types.js';

const firstLine = (text: string): string => (text.split('\n')[0] ?? '').trim().slice(0, 160);

/** The call's signature as the script writes it. */
export function stubLine(entry: CodeTool): string {
  return `tools.${entry.serverName}.${entry.toolName}(args: ${schemaType(entry.definition.inputSchema)}): Promise<string>;`;
}

/** A stub with its description's first line as a comment (a `*\/` in it cannot end the comment). */
function documentedStub(entry: CodeTool): string {
  const summary = firstLine(entry.definition.description).replaceAll('*/', '*\\/');
  return summary === '' ? stubLine(entry) : `/** ${summary} */\n${stubLine(entry)}`;
}

export const CODE_MODE_USAGE =
  "In mcp_code, `await tools.SERVER.TOOL(args)` resolves to the tool's text result and throws on an error or a refusal; print what you need with console.log.";

/** `mcp_describe {server}` with code mode: the stubs of one server's approved tools; starts nothing. */
export function serverStubs(gateway: GatewayCore, server: string): ToolExecution {
  const entries = codeTools(gateway).filter((entry) => entry.server === server);
  if (entries.length === 0)
    return textExecution(
      `no usable MCP server named ${JSON.stringify(server.slice(0, 64))} with approved tools; mcp_search lists them`,
      false,
    );
  const limit = gateway.options.maxResultChars ?? GATEWAY_DEFAULTS.maxResultChars;
  let body = entries.map(documentedStub).join('\n');
  if (body.length > limit) body = `${body.slice(0, limit)}\n[CrustCore: stubs cut at ${limit} characters]`;
  const options = gateway.options;
  const wrapped = options.wrap(`mcp ${server} stubs`, options.redactor.redactText(body));
  return textExecution(`Typed stubs of ${server}'s approved tools. ${CODE_MODE_USAGE}\n${wrapped}`, true);
}

/** The stub of one tool (for `mcp_describe {server, tool}`), or null when code mode cannot call it. */
export function toolStub(gateway: GatewayCore, server: string, tool: string): string | null {
  const entry = codeTools(gateway).find((candidate) => candidate.server === server && candidate.tool === tool);
  return entry === undefined ? null : stubLine(entry);
}
