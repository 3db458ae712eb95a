/**
 * A call to a loaded `mcp__SERVER__TOOL`: arguments bounded before the
 * kernel sees the call; at run time the tool's status is checked again (a
 * `tools/list_changed` may have disabled it since it was loaded), the call
 * runs under the record's timeout, and the result is shaped for the model.
 *
 * This is the per-call path (issue #14: ≤ 1.2× a direct SDK call), so it
 * allocates little: no closures it could share, one registry lookup per
 * step, and a running server's session taken without a wait.
 */
import type { ExtraToolPlanned, ToolExecution } from '@crustcore/agent';
import { approvedNow } from '../pins/pin-check.js';
import type { ToolPolicy } from '../registry/server-record.js';
import type { GatewayCore } from './gateway-core.js';
import { GATEWAY_DEFAULTS, textExecution } from './mcp-gateway-options.js';
import { shapeResult } from './result-shaping.js';
import { callOperation } from './tool-names.js';

const failed = (text: string): ToolExecution => textExecution(text, false);

/** How a result is framed: the gateway's untrusted-data wrapper unless the caller frames it itself. */
export type Wrap = (source: string, text: string) => string;

/**
 * The arguments' size as the transport sends them: the SDK serializes with JSON.stringify, so that is
 * what is measured (key order does not change the length). A value it cannot serialize (a bigint, a
 * cycle) is refused here, before the kernel sees the call.
 */
function argumentBytes(args: Record<string, unknown>): number | null {
  try {
    return Buffer.byteLength(JSON.stringify(args));
  } catch {
    return null;
  }
}

const STRICTNESS: Readonly<Record<ToolPolicy, number>> = { allow: 0, ask: 1, deny: 2 };
const stricter = (now: ToolPolicy, planned: ToolPolicy): boolean => STRICTNESS[now] > STRICTNESS[planned];

export function callPlan(
  gateway: GatewayCore,
  server: string,
  tool: string,
  args: Record<string, unknown> | null,
  wrap: Wrap = gateway.options.wrap,
): ExtraToolPlanned {
  if (args === null) return { kind: 'invalid', message: `${server} ${tool}: the arguments must be a JSON object` };
  const limit = gateway.options.maxArgumentBytes ?? GATEWAY_DEFAULTS.maxArgumentBytes;
  const size = argumentBytes(args);
  if (size === null) return { kind: 'invalid', message: `${server} ${tool}: the arguments are not plain JSON` };
  if (size > limit)
    return { kind: 'invalid', message: `${server} ${tool}: the arguments are ${size} bytes; the limit is ${limit}` };
  const record = gateway.record(server);
  const pin = record !== undefined && Object.hasOwn(record.tools, tool) ? record.tools[tool] : undefined;
  if (record === undefined || pin === undefined || pin.policy === 'deny')
    return { kind: 'invalid', message: `${server} ${tool} is not an approved tool` };
  return {
    kind: 'plan',
    plan: {
      operation: callOperation(server, tool, pin.policy),
      readOnly: false,
      execute: executor(gateway, { server, tool, args, wrap, policy: pin.policy }),
    },
  };
}

interface PlannedCall {
  readonly server: string;
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly wrap: Wrap;
  /** The tool's policy when the call was planned: what the kernel's gate judged (allow runs, ask asked). */
  readonly policy: ToolPolicy;
}

/**
 * The plan's `execute`. Made by this helper so the closure is anonymous: tsx (the tests, the
 * benchmark) gives every named closure its name with Object.defineProperty, once per call.
 */
const executor =
  (gateway: GatewayCore, call: PlannedCall) =>
  (signal: AbortSignal): Promise<ToolExecution> =>
    runCall(gateway, call, signal);

async function runCall(gateway: GatewayCore, call: PlannedCall, signal: AbortSignal): Promise<ToolExecution> {
  const { server, tool, args } = call;
  // A running server's session at once; otherwise started (or the reason it cannot be).
  const session = gateway.running(server) ?? (await gateway.session(server));
  if (typeof session === 'string') return failed(`cannot start ${server}: ${session}`);
  const live = session.tool(tool);
  const record = gateway.record(server);
  // Checked against the latest pins: a person may have approved (or the server changed) since loading.
  if (live === undefined || record === undefined || !approvedNow(record, live)) {
    gateway.unload(server, tool);
    return failed(
      `${server} ${tool} is disabled: its definition is no longer the one the user approved. The user must approve it again (crustcore mcp approve ${server}).`,
    );
  }
  // A person may have tightened the tool's policy while the call waited (for its approval, or its
  // turn): the gate judged the policy of the plan, so a stricter one now means the call does not run.
  const now = record.tools[tool]?.policy;
  if (now === undefined || stricter(now, call.policy))
    return failed(
      `${server} ${tool}: its policy became "${now ?? 'deny'}" after this call was planned under "${call.policy}"; the call did not run`,
    );
  const outcome = await session.call(tool, args, signal);
  if (outcome.kind === 'timeout')
    return failed(`${server} ${tool} did not answer within ${outcome.timeoutMs} ms; the server was stopped`);
  if (outcome.kind === 'failed')
    return failed(`${server} ${tool} failed: ${gateway.options.redactor.redactText(outcome.message)}`);
  const options = gateway.options;
  const shaped = shapeResult(outcome.result, {
    source: `mcp ${server}/${tool}`,
    maxChars: options.maxResultChars ?? GATEWAY_DEFAULTS.maxResultChars,
    redactor: options.redactor,
    wrap: call.wrap,
  });
  return { text: shaped.text, ok: shaped.ok, outputBytes: shaped.outputBytes, artifacts: shaped.artifacts };
}
