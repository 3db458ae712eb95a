/**
 * One of the user's MCP servers as a worker CLI (Codex, Claude Code) sees it: an MCP server on a
 * Unix socket that the worker's sandbox reaches through a small stdio bridge. It is not the user's
 * server: it lists the tools a person approved (the pinned definitions, so listing starts
 * nothing), and every call is planned by the gateway (arguments bounded, the live definition
 * checked against its pin, the result redacted, bounded and wrapped) and goes through the kernel's
 * tool gate (policy, approval, receipt) before it runs. The server's credentials stay here, in the
 * gateway: the worker gets results, never the server or its secrets.
 */
import type { ToolGate } from '@crustcore/agent';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { callPlan } from './call-plan.js';
import type { GatewayCore } from './gateway-core.js';
import { type CutOffReason, errorResult, serveToolEndpoint } from './tool-endpoint.js';
import { gatewayToolName } from './tool-names.js';

export {
  MAX_CALLS_IN_FLIGHT,
  MAX_UNREAD_ANSWER_BYTES,
  MAX_WORKER_MESSAGE_BYTES,
} from './tool-endpoint.js';

export interface WorkerEndpointOptions {
  readonly gateway: GatewayCore;
  /** The registered server this endpoint stands for. */
  readonly server: string;
  /** The kernel's gate for the task the worker runs in. */
  readonly gate: ToolGate;
  /** Told when a connection is cut off for passing a bound (diagnostics; tests wait on it). */
  readonly onCutOff?: (reason: CutOffReason) => void;
}

export interface WorkerEndpoint {
  close(): Promise<void>;
}

/** The approved tools of `server`, as their pins recorded them (a denied tool is not offered). */
export function approvedTools(gateway: GatewayCore, server: string): Tool[] {
  const record = gateway.record(server);
  if (record === undefined) return [];
  const tools: Tool[] = [];
  for (const [name, pin] of Object.entries(record.tools)) {
    if (pin.policy === 'deny') continue;
    const definition = pin.definition as { description?: unknown; inputSchema?: unknown } | null;
    const schema = definition?.inputSchema;
    const inputSchema =
      typeof schema === 'object' && schema !== null && (schema as { type?: unknown }).type === 'object'
        ? (schema as Tool['inputSchema'])
        : { type: 'object' as const };
    // Redacted like everything else of the server's the other side sees (a pinned description may hold a secret).
    const text = typeof definition?.description === 'string' ? definition.description.slice(0, 2_000) : '';
    const description = gateway.options.redactor.redactText(text);
    tools.push({ name, description, inputSchema });
  }
  return tools;
}

/** One call: planned by the gateway, decided by the kernel, run only when it says so. */
export async function callThroughGate(
  options: WorkerEndpointOptions,
  tool: string,
  args: unknown,
): Promise<CallToolResult> {
  const object =
    typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
  const planned = callPlan(options.gateway, options.server, tool, object);
  if (planned.kind === 'invalid') return errorResult(planned.message);
  const outcome = await options.gate.call({
    tool: gatewayToolName(options.server, tool),
    args: JSON.parse(JSON.stringify(object)),
    operation: planned.plan.operation,
    actor: 'agent',
    execute: planned.plan.execute,
  });
  if (outcome.kind === 'result') return { content: [{ type: 'text', text: outcome.output.text }] };
  return errorResult(`CrustCore refused this call: ${outcome.reason}`);
}

/** Listens on `socketPath` (0600) until closed. */
export function serveWorkerEndpoint(socketPath: string, options: WorkerEndpointOptions): Promise<WorkerEndpoint> {
  return serveToolEndpoint(socketPath, {
    tools: {
      name: options.server,
      list: () => approvedTools(options.gateway, options.server),
      call: (tool, args) => callThroughGate(options, tool, args),
    },
    ...(options.onCutOff === undefined ? {} : { onCutOff: options.onCutOff }),
  });
}
