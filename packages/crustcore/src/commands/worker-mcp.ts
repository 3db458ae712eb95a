/**
 * `crustcore run --backend codex|claude --mcp NAME,…` (docs/mcp-gateway.md): the user's MCP servers
 * a worker CLI may use, each served to it by CrustCore's gateway.
 */

import type { ToolGate } from '@crustcore/runtime';
import { UsageError } from '../cli/command.js';

/** What of a pack backend's context the servers need (pack-backends.ts passes its own). */
export interface WorkerMcpContext {
  readonly options: Readonly<Record<string, string>>;
  readonly repository?: string;
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;
  readonly toolGate: ToolGate;
}

/**
 * `--mcp NAME,…`: the user's MCP servers the worker may use, each through CrustCore's gateway (every
 * call a kernel tool call through the task's gate). A name that is not a trusted server allowed for
 * this repository stops the command before the task starts.
 */
export async function workerMcpServers(context: WorkerMcpContext): Promise<unknown> {
  const list = context.options.mcp;
  if (list === undefined) return undefined;
  const names = [...new Set(list.split(',').map((name) => name.trim()))];
  if (names.some((name) => name === '')) throw new UsageError('--mcp takes server names separated by commas');
  if (context.repository === undefined) throw new UsageError('--mcp needs the task to run in a repository');
  const gateway = await import('@crustcore/mcp-gateway');
  const served = await gateway.workerMcpServers({
    home: context.home,
    env: context.env,
    repository: context.repository,
    names,
    gate: context.toolGate,
  });
  if ('problem' in served) throw new UsageError(`--mcp: ${served.problem}`);
  return served.servers;
}
