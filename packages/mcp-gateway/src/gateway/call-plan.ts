/**
 * A call to a loaded `mcp__SERVER__TOOL`: arguments bounded before the
 * kernel sees the call; at run time the tool's status is checked again (a
 * `tools/list_changed` may have disabled it since it was loaded), the call
 * runs under the record's timeout, and the result is shaped for the model.
 */
import type { ExtraToolPlanned, ToolExecution } from '@crustcore/agent';
import { canonicalJson } from '../pins/canonical-json.js';
import { checkTool } from '../pins/pin-check.js';
import type { GatewayCore } from './gateway-core.js';
import { GATEWAY_DEFAULTS, textExecution } from './mcp-gateway-options.js';
import { shapeResult } from './result-shaping.js';
import { callOperation } from './tool-names.js';

const failed = (text: string): ToolExecution => textExecution(text, false);

/** How a result is framed: the gateway's untrusted-data wrapper unless the caller frames it itself. */
export type Wrap = (source: string, text: string) => string;

export function callPlan(
  gateway: GatewayCore,
  server: string,
  tool: string,
  args: Record<string, unknown> | null,
  wrap: Wrap = gateway.options.wrap,
): ExtraToolPlanned {
  if (args === null) return { kind: 'invalid', message: `${server} ${tool}: the arguments must be a JSON object` };
  const limit = gateway.options.maxArgumentBytes ?? GATEWAY_DEFAULTS.maxArgumentBytes;
  const size = Buffer.byteLength(canonicalJson(args));
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
      execute: (signal) => runCall(gateway, { server, tool, args, wrap }, signal),
    },
  };
}

interface PlannedCall {
  readonly server: string;
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly wrap: Wrap;
}

async function runCall(gateway: GatewayCore, call: PlannedCall, signal: AbortSignal): Promise<ToolExecution> {
  const { server, tool, args } = call;
  const session = await gateway.session(server);
  if (typeof session === 'string') return failed(`cannot start ${server}: ${session}`);
  const live = session.tools().find((candidate) => candidate.tool.name === tool);
  const record = gateway.record(server);
  // Checked against the latest pins: a person may have approved (or the server changed) since loading.
  const checked = live === undefined || record === undefined ? undefined : checkTool(record, live.tool, live);
  if (checked === undefined || checked.status.kind !== 'approved') {
    gateway.unload(server, tool);
    return failed(
      `${server} ${tool} is disabled: its definition is no longer the one the user approved. The user must approve it again (crustcore mcp approve ${server}).`,
    );
  }
  const outcome = await session.call(tool, args, signal);
  if (outcome.kind === 'timeout')
    return failed(`${server} ${tool} did not answer within ${outcome.timeoutMs} ms; the server was stopped`);
  if (outcome.kind === 'failed')
    return failed(`${server} ${tool} failed: ${gateway.options.redactor.redactText(outcome.message)}`);
  const options = gateway.options;
  const shaped = shapeResult(outcome.result, {
    source: `mcp ${server}/${tool}`,
    maxChars: options.maxResultChars ?? GATEWAY_DEFAULTS.maxResultChars,
    redact: (text) => options.redactor.redactText(text),
    wrap: call.wrap,
  });
  return { text: shaped.text, ok: shaped.ok, outputBytes: shaped.outputBytes, artifacts: shaped.artifacts };
}
