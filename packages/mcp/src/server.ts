/**
 * The MCP server: the frozen tool set on the official SDK's `McpServer`.
 * tools/call is CrustCore's own handler (the SDK's McpServer only lists the
 * tools): an unknown tool or arguments that do not fit the published schema
 * are JSON-RPC errors -32602; then CrustCore decodes with io-ts (bounds) and
 * the service's value becomes the tool result. Failures the model can act on
 * are tool errors (`isError: true`) with a stable code; nothing a caller
 * sends can throw out of a handler except those protocol errors.
 */
import type { Json } from '@crustcore/kernel';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type CallToolResult,
  ErrorCode,
  McpError,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import * as t from 'io-ts';
import { z } from 'zod';
import type { McpService } from './service.js';
import { StatePlaneUnavailable, type ToolCallContext, type ToolResult } from './task-host.js';
import {
  describeToolInputErrors,
  FROZEN_TOOLS,
  TOOL_DESCRIPTIONS,
  ToolInputCodecs,
  type ToolName,
  ToolShapes,
} from './tool-inputs.js';
import { VerifyProgress } from './verify-progress.js';

export const SERVER_NAME = 'crustcore';

const asText = (value: Json): string => JSON.stringify(value, null, 2);

/** Turns text into what a model may see (secrets replaced by markers); the caller is model-facing. */
export type RedactText = (text: string) => string;

function toCallResult(result: ToolResult, redact: RedactText): CallToolResult {
  if (result._tag === 'Right') return { content: [{ type: 'text', text: redact(asText(result.right)) }] };
  return { isError: true, content: [{ type: 'text', text: redact(`${result.left.code}: ${result.left.message}`) }] };
}

const READ_ONLY = new Set<ToolName>(['status', 'diff', 'export']);

/** Enough of a tools/call request to dispatch it; the rest is each tool's input codec's to judge. */
const CallParamsC = t.type({
  name: t.string,
  arguments: t.union([t.UnknownRecord, t.undefined]),
  _meta: t.union([t.type({ progressToken: t.union([t.string, t.number, t.undefined]) }), t.undefined]),
});

/**
 * Protocol errors, as the MCP spec (2025-11-25) has them: an unknown tool or
 * arguments that do not fit the tool's published input schema are JSON-RPC
 * errors -32602 (the SDK's McpServer would wrap them into an isError result);
 * a bound crossed inside well-typed input stays a tool error (`invalid-input`)
 * the model can correct.
 */
function invalidParams(message: string): McpError {
  return new McpError(ErrorCode.InvalidParams, message);
}

function knownTool(name: string): ToolName {
  if ((FROZEN_TOOLS as readonly string[]).includes(name)) return name as ToolName;
  throw invalidParams(
    `Unknown tool: ${JSON.stringify(name.slice(0, 100))}. This server's tools are ${FROZEN_TOOLS.join(', ')}; call tools/list for their input schemas.`,
  );
}

function checkShape(name: ToolName, args: unknown): void {
  const parsed = z.object(ToolShapes[name]).safeParse(args ?? {});
  if (parsed.success) return;
  const issues = parsed.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`)
    .join('; ');
  throw invalidParams(
    `Invalid arguments for tool ${name}: ${issues}. Send the arguments its input schema in tools/list names (required: ${
      requiredOf(name).join(', ') || 'none'
    }).`,
  );
}

const requiredOf = (name: ToolName): string[] =>
  Object.entries(ToolShapes[name])
    .filter(([, shape]) => !(shape as z.ZodType).safeParse(undefined).success)
    .map(([key]) => key);

/** tools/call with a lenient params shape: the SDK's Server checks CallToolRequest, this handler the rest. */
const LenientCallToolRequest = z.object({ method: z.literal('tools/call'), params: z.unknown() });

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

function progressFor(extra: Extra, token: string | number | undefined): VerifyProgress | undefined {
  if (token === undefined) return undefined;
  return new VerifyProgress(({ progress, message }) =>
    extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, message } }),
  );
}

type ToolCalls = { readonly [N in ToolName]: (input: never, context: ToolCallContext) => Promise<ToolResult> };

/** tools/call: protocol errors thrown (-32602), then the io-ts decode, then the service's answer as a result. */
function dispatcher(call: ToolCalls, redact: RedactText): (params: unknown, extra: Extra) => Promise<CallToolResult> {
  return async (params, extra) => {
    const decoded = CallParamsC.decode(params);
    if (decoded._tag === 'Left')
      throw invalidParams('tools/call needs params { name: string, arguments?: object }; see tools/list');
    const name = knownTool(decoded.right.name);
    checkShape(name, decoded.right.arguments);
    const input = ToolInputCodecs[name].decode(decoded.right.arguments ?? {});
    if (input._tag === 'Left') {
      return toCallResult(
        { _tag: 'Left', left: { code: 'invalid-input', message: describeToolInputErrors(input.left) } },
        redact,
      );
    }
    const progress = progressFor(extra, decoded.right._meta?.progressToken);
    try {
      const context: ToolCallContext = { signal: extra.signal, ...(progress === undefined ? {} : { progress }) };
      return toCallResult(await call[name](input.right as never, context), redact);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const code = error instanceof StatePlaneUnavailable ? (error.busy ? 'busy' : 'refused') : 'internal';
      return toCallResult({ _tag: 'Left', left: { code, message: message.slice(0, 2_000) } }, redact);
    }
  };
}

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
  const call: ToolCalls = {
    create_task: (input) => service.createTask(input),
    stage_diff: (input) => service.stageDiff(input),
    verify: (input, context) => service.verify(input, context),
    status: (input) => service.status(input),
    diff: (input) => service.diff(input),
    approve: (input) => service.approve(input),
    apply: (input) => service.apply(input),
    export: (input) => service.exportPatch(input),
  };
  // Registered for tools/list (the SDK publishes each zod shape as JSON schema); calls go to `dispatch`.
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
      async (): Promise<CallToolResult> => {
        throw new Error('unreachable: tools/call is dispatched by the CrustCore handler');
      },
    );
  }
  const dispatch = dispatcher(call, redact);
  server.server.setRequestHandler(LenientCallToolRequest, (request, extra) => dispatch(request.params, extra));
  return server;
}
