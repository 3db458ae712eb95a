/**
 * `mcp_search` and `mcp_describe`. Search reads the registry's pins only —
 * names and first lines of approved definitions — so listing what exists
 * starts nothing. Describe starts one server and loads one approved tool; a
 * tool whose live definition differs from its pin stays out of reach.
 */
import type { ToolExecution } from '@crustcore/agent';
import { CODE_MODE_USAGE, toolStub } from '../code-mode/stubs.js';
import { checkTool } from '../pins/pin-check.js';
import type { GatewayCore } from './gateway-core.js';
import { textExecution } from './mcp-gateway-options.js';

const firstLine = (text: string): string => (text.split('\n')[0] ?? '').trim().slice(0, 160);

export function searchServers(gateway: GatewayCore, query: string): ToolExecution {
  const words = query
    .toLowerCase()
    .split(/\s+/)
    .filter((word) => word !== '');
  const lines: string[] = [];
  for (const record of gateway.usableServers()) {
    for (const [tool, pin] of Object.entries(record.tools)) {
      if (pin.policy === 'deny') continue;
      const description = firstLine(String((pin.definition as { description?: unknown }).description ?? ''));
      const line = `${record.name} ${tool} — ${description}`;
      if (words.every((word) => line.toLowerCase().includes(word))) lines.push(line);
    }
  }
  const text =
    lines.length === 0
      ? 'No approved MCP tools match. (A person registers and approves servers with `crustcore mcp`.)'
      : `Approved MCP tools (server tool — summary). Load one with mcp_describe:\n${lines.join('\n')}`;
  // Descriptions come from servers: data, not instructions.
  return textExecution(gateway.options.wrap('mcp_search', gateway.options.redactor.redactText(text)), true);
}

export async function describeTool(gateway: GatewayCore, server: string, tool: string): Promise<ToolExecution> {
  const record = gateway.record(server);
  if (record === undefined)
    return textExecution(
      `no usable MCP server named ${JSON.stringify(server.slice(0, 64))}; mcp_search lists them`,
      false,
    );
  const pin = Object.hasOwn(record.tools, tool) ? record.tools[tool] : undefined;
  if (pin?.policy === 'deny') return textExecution(`${server} ${tool} is denied by the user's policy`, false);
  const session = await gateway.session(server);
  if (typeof session === 'string') return textExecution(`cannot start ${server}: ${session}`, false);
  const live = session.tools().find((candidate) => candidate.tool.name === tool);
  const checked = live === undefined ? undefined : checkTool(record, live.tool, live);
  if (checked === undefined)
    return textExecution(`${server} has no tool named ${JSON.stringify(tool.slice(0, 128))}`, false);
  if (checked.status.kind === 'changed') {
    gateway.unload(server, tool);
    return textExecution(
      `${server} ${tool} is disabled: its definition changed since the user approved it. The user must review and approve it again (crustcore mcp approve ${server}).`,
      false,
    );
  }
  if (checked.status.kind === 'unapproved')
    return textExecution(
      `${server} ${tool} has not been approved by the user (crustcore mcp approve ${server}).`,
      false,
    );
  const name = gateway.load(server, checked);
  const schema = JSON.stringify(checked.definition.inputSchema ?? {}, null, 1);
  // With code mode, the same tool as the script calls it (from the pin, which the live definition equals).
  const stub = gateway.options.codeMode === undefined ? null : toolStub(gateway, server, tool);
  const body = `${checked.definition.description}\ninput schema: ${schema}${stub === null ? '' : `\nin mcp_code: ${stub}`}`;
  const text = `Loaded ${name} (${checked.status.readOnly ? 'read-only' : 'may change things; the user may be asked'}). Call it by that name.${stub === null ? '' : ` ${CODE_MODE_USAGE}`}\n${gateway.options.wrap(`mcp ${server}/${tool} definition`, gateway.options.redactor.redactText(body))}`;
  return textExecution(text, true);
}
