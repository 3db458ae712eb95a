/**
 * `mcp_code {script}`: the model's JavaScript (an ES module) run against the approved MCP tools.
 * The call itself is a kernel tool call (an `exec` of `mcp code`, the script in its arguments, so
 * a person asked sees it); while it runs, the gateway serves the script an endpoint of its own on
 * a socket bound into the script's sandbox, and every call the script makes there is a kernel tool
 * call of its own (code-catalog.ts). The script's output — bounded, redacted, wrapped as untrusted
 * data — is the result. Whatever happens, the endpoint and its socket are gone when the call ends.
 */
import type { ExtraToolPlanned, ToolExecution } from '@crustcore/agent';
import * as t from 'io-ts';
import type { GatewayCore } from '../gateway/gateway-core.js';
import { type CodeModeOptions, GATEWAY_DEFAULTS, textExecution } from '../gateway/mcp-gateway-options.js';
import { shapeResult } from '../gateway/result-shaping.js';
import { serveToolEndpoint, type ToolEndpoint } from '../gateway/tool-endpoint.js';
import { metaOperation } from '../gateway/tool-names.js';
import { codeCatalog } from './code-catalog.js';
import {
  removeScriptDirectories,
  runScriptSandboxed,
  type ScriptDirectories,
  type ScriptRun,
  scriptCap,
  scriptDirectories,
} from './script-sandbox.js';

export const CODE_TOOL = 'mcp_code';
export const DEFAULT_CODE_TIMEOUT_MS = 120_000;

const CodeArgumentsC = t.type({ script: t.string });

const failed = (text: string): ToolExecution => textExecution(text, false);

export function codePlan(gateway: GatewayCore, mode: CodeModeOptions, args: unknown): ExtraToolPlanned {
  const decoded = CodeArgumentsC.decode(args);
  if (decoded._tag === 'Left' || decoded.right.script.trim() === '')
    return { kind: 'invalid', message: 'mcp_code needs {"script": "..."}: JavaScript, an ES module' };
  const script = decoded.right.script;
  const limit = gateway.options.maxArgumentBytes ?? GATEWAY_DEFAULTS.maxArgumentBytes;
  const size = Buffer.byteLength(script);
  if (size > limit) return { kind: 'invalid', message: `mcp_code: the script is ${size} bytes; the limit is ${limit}` };
  return {
    kind: 'plan',
    plan: {
      operation: metaOperation(['code']),
      readOnly: false,
      execute: (signal) => runCode(gateway, mode, script, signal),
    },
  };
}

/**
 * A failure to set the script up (a full /tmp, a socket that cannot listen) is the call's result,
 * never a throw: the agent treats a throwing tool as a runtime failure and stops the task.
 */
async function runCode(
  gateway: GatewayCore,
  mode: CodeModeOptions,
  script: string,
  signal: AbortSignal,
): Promise<ToolExecution> {
  try {
    return await runCodeIn(gateway, mode, scriptDirectories(script), signal);
  } catch (error) {
    const message = gateway.options.redactor.redactText((error as Error).message);
    return failed(`mcp_code could not run the script: ${message}`);
  }
}

async function runCodeIn(
  gateway: GatewayCore,
  mode: CodeModeOptions,
  directories: ScriptDirectories,
  signal: AbortSignal,
): Promise<ToolExecution> {
  const timeoutMs = mode.timeoutMs ?? DEFAULT_CODE_TIMEOUT_MS;
  const catalog = codeCatalog(gateway, mode.gate);
  let endpoint: ToolEndpoint | null = null;
  try {
    // The sandbox first: where a script cannot be confined, nothing is served for it.
    const made = scriptCap(mode.workerCap, directories, timeoutMs);
    if (!('cap' in made)) return failed(`mcp_code could not run the script: ${made.refusal}`);
    endpoint = await serveToolEndpoint(directories.socketPath, { tools: catalog });
    mode.onServe?.(directories.socketPath);
    const run = await runScriptSandboxed(made.cap, directories, { timeoutMs, signal });
    if ('refusal' in run)
      return failed(`mcp_code could not run the script: ${gateway.options.redactor.redactText(run.refusal)}`);
    return scriptResult(gateway, run, timeoutMs);
  } finally {
    await catalog.end();
    await endpoint?.close();
    removeScriptDirectories(directories);
  }
}

function status(run: ScriptRun, timeoutMs: number): string {
  if (run.timedOut) return `the script did not finish within ${timeoutMs} ms; its sandbox was killed`;
  if (run.cancelled) return 'the script was stopped: the task is stopping';
  if (run.exitCode === 0) return 'the script finished';
  return `the script failed (exit ${run.exitCode ?? 'by a signal'})`;
}

/** CrustCore's status line, then the script's output as untrusted data. */
function scriptResult(gateway: GatewayCore, run: ScriptRun, timeoutMs: number): ToolExecution {
  const stderr = run.stderr.trim();
  const separator = run.stdout === '' || run.stdout.endsWith('\n') ? '' : '\n';
  const output = stderr === '' ? run.stdout : `${run.stdout}${separator}[stderr]\n${stderr}\n`;
  const options = gateway.options;
  const shaped = shapeResult(
    { content: [{ type: 'text', text: output }] },
    {
      source: 'mcp_code script output',
      maxChars: options.maxResultChars ?? GATEWAY_DEFAULTS.maxResultChars,
      redactor: options.redactor,
      wrap: options.wrap,
    },
  );
  const ok = run.exitCode === 0 && !run.timedOut && !run.cancelled;
  const text = `${status(run, timeoutMs)}; its output:\n${shaped.text}`;
  return { text, ok, outputBytes: shaped.outputBytes, artifacts: shaped.artifacts };
}
