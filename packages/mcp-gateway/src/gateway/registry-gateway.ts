/**
 * The native agent's MCP gateway for `crustcore run --backend native`, from
 * the user's registry (here, in the pack, so nano links none of it): built
 * only when the registry has a trusted server allowed for this repository
 * (otherwise the agent gets no meta-tools at all: zero cost). The vault is
 * opened only unattended (a key file); without it, servers that need a
 * credential say so when the model asks for them.
 */
import { type ExtraToolsFactory, wrapUntrusted } from '@crustcore/agent';
import { openUnattendedVault, Redactor } from '@crustcore/secrets';
import { readRegistry, registryPath } from '../registry/registry-store.js';
import { McpGateway } from './mcp-gateway.js';

export interface GatewaySetup {
  readonly home: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The user's repository (records list the repositories allowed to use them). */
  readonly repository: string;
}

export async function registryGatewayFactory(setup: GatewaySetup): Promise<ExtraToolsFactory | undefined> {
  const path = registryPath(setup.home);
  const first = readRegistry(path);
  if (first._tag === 'Left') return undefined;
  const usable = first.right.servers.some(
    (record) =>
      record.trust === 'trusted' &&
      (record.repositories.includes('*') || record.repositories.includes(setup.repository)),
  );
  if (!usable) return undefined;
  const { vault } = await openUnattendedVault(setup.home, setup.env);
  let last = first.right;
  // Re-read on use so a person's `crustcore mcp approve` counts in a running task; a bad file keeps the last good one.
  const registry = () => {
    const read = readRegistry(path);
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
    });
}
