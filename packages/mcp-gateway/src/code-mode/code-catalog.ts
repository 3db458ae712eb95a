/**
 * What a code-mode script reaches over its socket: the tools of `codeTools` (approved, not denied,
 * on servers usable here) under their stub names, and nothing else. Each call is planned by the
 * gateway exactly as a direct `mcp__SERVER__TOOL` call (arguments bounded, the live definition
 * checked against its pin, the result redacted and bounded) and goes through the task's `ToolGate`
 * under that same name: a kernel `ToolCallRequested`, the policy, an approval when it asks, a
 * receipt. The script gets the redacted text without the untrusted-data wrapper — what it prints
 * is wrapped as a whole before the model sees it — so it can work with the text as data.
 */
import type { ToolExecution, ToolGate } from '@crustcore/agent';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import * as t from 'io-ts';
import { callPlan } from '../gateway/call-plan.js';
import type { GatewayCore } from '../gateway/gateway-core.js';
import { textExecution } from '../gateway/mcp-gateway-options.js';
import { type EndpointTools, errorResult } from '../gateway/tool-endpoint.js';
import { gatewayToolName } from '../gateway/tool-names.js';
import { type CodeTool, codeTools, endpointName } from './code-names.js';

/** Calls one script may make: a loop in a script must not flood the ledger or a person's prompts. */
export const MAX_CALLS_PER_SCRIPT = 64;

/** A call's arguments as the script sent them (the SDK checked the JSON-RPC frame; this checks the shape). */
const ArgumentsC = t.UnknownRecord;

export interface CodeCatalog extends EndpointTools {
  /**
   * The script's call is over: a call the kernel allows after this runs nothing, and a call still
   * running (the script did not await it) is stopped; resolves once each has ended, so nothing of
   * the script goes on after its `mcp_code` call and every inner call is recorded inside it.
   */
  end(): Promise<void>;
}

/** What the script's calls share: whether its call is over, and the calls still running. */
interface ScriptCalls {
  ended: boolean;
  readonly stop: AbortController;
  readonly running: Set<Promise<ToolExecution>>;
}

const asIs = (_source: string, text: string): string => text;
const notRun = (text: string): ToolExecution => textExecution(text, false);

/** Runs a call the kernel allowed, stopped with the task or when the script's call ends. */
async function runWhileScript(
  calls: ScriptCalls,
  run: (signal: AbortSignal) => Promise<ToolExecution>,
  task: AbortSignal,
): Promise<ToolExecution> {
  // A person may answer an approval after the script was stopped: nothing is left to receive the result.
  if (calls.ended) return notRun('not run: the script that made this call has ended');
  const own = new AbortController();
  const forward = (): void => own.abort();
  task.addEventListener('abort', forward, { once: true });
  calls.stop.signal.addEventListener('abort', forward, { once: true });
  const running = run(own.signal);
  calls.running.add(running);
  try {
    return await running;
  } finally {
    calls.running.delete(running);
    task.removeEventListener('abort', forward);
    calls.stop.signal.removeEventListener('abort', forward);
  }
}

async function gatedCall(
  gateway: GatewayCore,
  gate: ToolGate,
  entry: CodeTool,
  args: Record<string, unknown>,
  calls: ScriptCalls,
): Promise<CallToolResult> {
  const planned = callPlan(gateway, entry.server, entry.tool, args, asIs);
  if (planned.kind === 'invalid') return errorResult(planned.message);
  let executed: ToolExecution | null = null;
  const outcome = await gate.call({
    tool: gatewayToolName(entry.server, entry.tool),
    args: JSON.parse(JSON.stringify(args)),
    operation: planned.plan.operation,
    actor: 'agent',
    execute: async (signal) => {
      executed = await runWhileScript(calls, planned.plan.execute, signal);
      return executed;
    },
  });
  if (outcome.kind !== 'result') return errorResult(`CrustCore refused this call: ${outcome.reason}`);
  const ok = (executed as ToolExecution | null)?.ok ?? false;
  return { content: [{ type: 'text', text: outcome.output.text }], ...(ok ? {} : { isError: true }) };
}

/** The catalog for one script, fixed when it starts (a later approval counts from the next script). */
export function codeCatalog(gateway: GatewayCore, gate: ToolGate): CodeCatalog {
  const entries = new Map(codeTools(gateway).map((entry) => [endpointName(entry), entry]));
  const script: ScriptCalls = { ended: false, stop: new AbortController(), running: new Set() };
  let calls = 0;
  return {
    name: 'crustcore-code-mode',
    list: (): Tool[] => [...entries.keys()].map((name) => ({ name, inputSchema: { type: 'object' } })),
    call: async (name, args) => {
      const entry = entries.get(name);
      if (entry === undefined)
        return errorResult(
          `no tool ${JSON.stringify(name.slice(0, 200))} for this script: the stubs (mcp_describe with a server) list what it may call`,
        );
      const decoded = ArgumentsC.decode(args);
      if (decoded._tag === 'Left') return errorResult(`${name}: the arguments must be one JSON object`);
      calls += 1;
      if (calls > MAX_CALLS_PER_SCRIPT)
        return errorResult(
          `this script made more than ${MAX_CALLS_PER_SCRIPT} calls; split the work into several scripts`,
        );
      return gatedCall(gateway, gate, entry, decoded.right, script);
    },
    end: async () => {
      script.ended = true;
      script.stop.abort();
      await Promise.allSettled([...script.running]);
    },
  };
}
