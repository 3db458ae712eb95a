/**
 * The gateway's meta-tools as the model sees them: all it has of the user's MCP servers until it
 * asks for more. Kept small on purpose (benches/mcp-gateway.bench.ts counts their tokens). With code
 * mode, `mcp_describe` also takes a server alone (that server's typed stubs, from the pins: starts
 * nothing) and `mcp_code` joins them.
 */
import type { ToolDefinition } from '@crustcore/net';
import { CODE_TOOL } from '../code-mode/code-tool.js';
import { DESCRIBE_TOOL, SEARCH_TOOL } from './tool-names.js';

const SEARCH: ToolDefinition = {
  name: SEARCH_TOOL,
  description:
    "List the user's MCP servers and their approved tools (name and one line each). Starts nothing. Then use mcp_describe to load one tool.",
  parameters: {
    type: 'object',
    properties: { query: { type: 'string', description: 'Words to filter server and tool names (optional).' } },
    additionalProperties: false,
  },
};

const DESCRIBE: ToolDefinition = {
  name: DESCRIBE_TOOL,
  description:
    'Load one MCP tool: starts its server and returns its input schema; the tool is then callable as mcp__SERVER__TOOL.',
  parameters: {
    type: 'object',
    properties: { server: { type: 'string' }, tool: { type: 'string' } },
    required: ['server', 'tool'],
    additionalProperties: false,
  },
};

const DESCRIBE_WITH_STUBS: ToolDefinition = {
  ...DESCRIBE,
  description: `${DESCRIBE.description} Given only a server: its typed stubs for mcp_code.`,
  parameters: { ...DESCRIBE.parameters, required: ['server'] },
};

const CODE: ToolDefinition = {
  name: CODE_TOOL,
  description:
    'Run a JavaScript module in a sandbox where `await tools.SERVER.TOOL(args)` calls an approved MCP tool; its console output is the result.',
  parameters: {
    type: 'object',
    properties: { script: { type: 'string' } },
    required: ['script'],
    additionalProperties: false,
  },
};

export const metaDefinitions = (codeMode: boolean): readonly ToolDefinition[] =>
  codeMode ? [SEARCH, DESCRIBE_WITH_STUBS, CODE] : [SEARCH, DESCRIBE];
