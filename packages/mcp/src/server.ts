/**
 * The MCP server: the frozen tool set on the official SDK's `McpServer`.
 * Each call is decoded twice — the SDK checks the zod shape (types), then
 * CrustCore decodes with io-ts (bounds, shapes) — and the service's value
 * becomes the tool result. Failures are tool errors (`isError: true`) with a
 * stable code; nothing a caller sends can throw out of a handler.
 */
import type { Json } from '@crustcore/kernel';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpService } from './service.js';
import type { ToolResult } from './task-host.js';
import {
  describeToolInputErrors,
  FROZEN_TOOLS,
  TOOL_DESCRIPTIONS,
  ToolInputCodecs,
  type ToolName,
  ToolShapes,
} from './tool-inputs.js';

export const SERVER_NAME = 'crustcore';

const asText = (value: Json): string => JSON.stringify(value, null, 2);

/** Turns text into what a model may see (secrets replaced by markers); the caller is model-facing. */
export type RedactText = (text: string) => string;

function toCallResult(result: ToolResult, redact: RedactText): CallToolResult {
  if (result._tag === 'Right') return { content: [{ type: 'text', text: redact(asText(result.right)) }] };
  return { isError: true, content: [{ type: 'text', text: redact(`${result.left.code}: ${result.left.message}`) }] };
}

const READ_ONLY = new Set<ToolName>(['status', 'diff', 'export']);

/**
 * Every result and error text leaves through `redact`: test output, diagnoses
 * and patches can carry secrets from the repository, and whoever called the
 * tool is usually a model.
 */
export function createMcpServer(
  service: McpService,
  options: { readonly version: string; readonly redact: RedactText },
): McpServer {
  const { redact } = options;
  const server = new McpServer(
    { name: SERVER_NAME, version: options.version },
    {
      capabilities: { tools: {} },
      instructions:
        'CrustCore stages, verifies and applies code changes. You may create_task, stage_diff, verify, ' +
        'status, diff and export. Approval comes only from a person: after verify passes, ask them to run ' +
        '`crustcore mcp-token TASK` and give you the token for approve; then apply.',
    },
  );
  const call: { readonly [N in ToolName]: (input: never) => Promise<ToolResult> } = {
    create_task: (input) => service.createTask(input),
    stage_diff: (input) => service.stageDiff(input),
    verify: (input) => service.verify(input),
    status: (input) => service.status(input),
    diff: (input) => service.diff(input),
    approve: (input) => service.approve(input),
    apply: (input) => service.apply(input),
    export: (input) => service.exportPatch(input),
  };
  for (const name of FROZEN_TOOLS) {
    server.registerTool(
      name,
      {
        title: name.replace('_', ' '),
        description: TOOL_DESCRIPTIONS[name],
        inputSchema: ToolShapes[name],
        annotations: {
          readOnlyHint: READ_ONLY.has(name),
          destructiveHint: name === 'apply',
          idempotentHint: READ_ONLY.has(name),
          openWorldHint: false,
        },
      },
      async (args: unknown): Promise<CallToolResult> => {
        const decoded = ToolInputCodecs[name].decode(args ?? {});
        if (decoded._tag === 'Left') {
          return toCallResult(
            { _tag: 'Left', left: { code: 'invalid-input', message: describeToolInputErrors(decoded.left) } },
            redact,
          );
        }
        try {
          return toCallResult(await call[name](decoded.right as never), redact);
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          return toCallResult({ _tag: 'Left', left: { code: 'internal', message: message.slice(0, 2_000) } }, redact);
        }
      },
    );
  }
  return server;
}
