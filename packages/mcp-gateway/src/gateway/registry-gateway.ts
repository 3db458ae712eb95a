/**
 * The native agent's MCP gateway for `crustcore run --backend native`, from
 * the user's registry (here, in the pack, so nano links none of it): built
 * only when the registry has a trusted server allowed for this repository
 * (otherwise the agent gets no meta-tools at all: zero cost). The vault is
 * opened only unattended (a key file); without it, servers that need a
 * credential say so when the model asks for them. Given the task's gate and
 * worker capability, the gateway also offers code mode (`mcp_code`).
 */
import { type ExtraToolsFactory, type ToolGate, wrapUntrusted } from '@crustcore/agent';
import type { SandboxExecCap } from '@crustcore/sandbox';
import { openUnattendedVault, Redactor } from '@crustcore/secrets';
import { RegistryReader } from '../registry/registry-reader.js';
import { readRegistry, registryPath } from '../registry/registry-store.js';
import type { RegistryFile } from '../registry/server-record.js';
import { McpGateway } from './mcp-gateway.js';
import type { CodeModeOptions } from './mcp-gateway-options.js';
import { serveWorkerEndpoint } from './worker-endpoint.js';

export interface GatewaySetup {
  readonly home: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The user's repository (records list the repositories allowed to use them). */
  readonly repository: string;
}

/** The native agent's task: its kernel gate and worker capability turn code mode on. */
export interface NativeGatewaySetup extends GatewaySetup {
  readonly gate?: ToolGate;
  readonly workerCap?: () => SandboxExecCap;
}

export async function registryGatewayFactory(setup: NativeGatewaySetup): Promise<ExtraToolsFactory | undefined> {
  const { gate, workerCap } = setup;
  return gatewayFactory(setup, gate === undefined || workerCap === undefined ? {} : { codeMode: { gate, workerCap } });
}

const usableIn = (record: RegistryFile['servers'][number], repository: string): boolean =>
  record.trust === 'trusted' && (record.repositories.includes('*') || record.repositories.includes(repository));

async function gatewayFactory(
  setup: GatewaySetup,
  extra: { readonly restart?: boolean; readonly codeMode?: CodeModeOptions } = {},
): Promise<((worktree: string) => McpGateway) | undefined> {
  const reader = new RegistryReader(registryPath(setup.home));
  const first = reader.read();
  if (first._tag === 'Left') return undefined;
  if (!first.right.servers.some((record) => usableIn(record, setup.repository))) return undefined;
  const { vault } = await openUnattendedVault(setup.home, setup.env);
  let last = first.right;
  // Read on use so a person's `crustcore mcp approve` counts in a running task (decoded only when the
  // file changed: a call reads it twice); a bad file keeps the last good one.
  const registry = () => {
    const read = reader.read();
    if (read._tag === 'Right') last = read.right;
    return last;
  };
  return (worktree) =>
    new McpGateway({
      registry,
      repository: setup.repository,
      worktree,
      secrets: vault,
      redactor: new Redactor(),
      wrap: wrapUntrusted,
      ...extra,
    });
}

/** A server a worker may use, in the shape the workers pack takes (the packs do not import each other). */
export interface WorkerMcpServerSpec {
  readonly name: string;
  readonly serve: (socketPath: string, worktree: string) => Promise<{ close(): Promise<void> }>;
  /** Stops every gateway (and its servers) this task started; later `serve` calls start nothing. */
  readonly release: () => Promise<void>;
}

/** Why `name` cannot be given to a worker here, with what to do; null when it can. */
function unusableBecause(registry: RegistryFile, name: string, repository: string): string | null {
  const record = registry.servers.find((candidate) => candidate.name === name);
  if (record === undefined)
    return `no MCP server named ${JSON.stringify(name.slice(0, 64))} is registered (crustcore mcp list)`;
  if (record.trust !== 'trusted') return `the MCP server ${name} is not approved yet (crustcore mcp approve ${name})`;
  if (!Object.values(record.tools).some((pin) => pin.policy !== 'deny'))
    return `the MCP server ${name} has no approved tool yet (crustcore mcp approve ${name})`;
  if (!usableIn(record, repository))
    return `the MCP server ${name} is not allowed for ${repository} (crustcore mcp add ${name} … --repo ${repository})`;
  return null;
}

/**
 * The servers `crustcore run --backend codex|claude --mcp NAME,…` gives the worker: each served for
 * one run by a gateway of its own, whose calls go through `gate` (the task's kernel). A name that is
 * not a trusted server allowed for this repository is refused before the task starts.
 */
export async function workerMcpServers(
  setup: GatewaySetup & { readonly names: readonly string[]; readonly gate: ToolGate },
): Promise<{ readonly servers: readonly WorkerMcpServerSpec[] } | { readonly problem: string }> {
  const read = readRegistry(registryPath(setup.home));
  if (read._tag === 'Left') return { problem: `the MCP registry cannot be read: ${read.left.message}` };
  for (const name of setup.names) {
    const problem = unusableBecause(read.right, name, setup.repository);
    if (problem !== null) return { problem };
  }
  const factory = await gatewayFactory(setup, { restart: false });
  if (factory === undefined) return { problem: 'no MCP server is usable for this repository (crustcore mcp list)' };
  // One gateway per task worktree, kept for every attempt: a task's attempts share its worktree, and
  // a server started for a later attempt would load its code from what an earlier worker wrote.
  const gateways = new Map<string, McpGateway>();
  let released = false;
  const release = async (): Promise<void> => {
    released = true;
    const all = [...gateways.values()];
    gateways.clear();
    await Promise.all(all.map((gateway) => gateway.close()));
  };
  const servers = setup.names.map((name) => ({
    name,
    release,
    serve: async (socketPath: string, worktree: string) => {
      if (released) throw new Error(`the MCP server ${name} was asked for after its task ended`);
      let gateway = gateways.get(worktree);
      if (gateway === undefined) {
        gateway = factory(worktree);
        gateways.set(worktree, gateway);
      }
      // Started at the task's first attempt, before its worker runs, and (restart off) never again:
      // the server's code is what the worktree held before any worker wrote to it.
      const started = await gateway.session(name);
      if (typeof started === 'string') throw new Error(`the MCP server ${name} did not start: ${started}`);
      const endpoint = await serveWorkerEndpoint(socketPath, { gateway, server: name, gate: setup.gate });
      // The endpoint goes with the attempt; the servers stay until the task ends (release).
      return { close: () => endpoint.close() };
    },
  }));
  return { servers };
}
