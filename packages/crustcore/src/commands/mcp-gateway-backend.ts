/**
 * The native agent's MCP gateway for `crustcore run --backend native`: built
 * only when the registry has a trusted server allowed for this repository
 * (otherwise the agent gets no meta-tools at all: zero cost). The vault is
 * opened only unattended (a key file); without it, servers that need a
 * credential say so when the model asks for them.
 */
import type { ExtraToolsFactory } from '@crustcore/agent';

export interface GatewaySetup {
  readonly home: string;
  readonly env: NodeJS.ProcessEnv;
  /** The user's repository (records list the repositories allowed to use them). */
  readonly repository: string;
}

export async function mcpGatewayFactory(setup: GatewaySetup): Promise<ExtraToolsFactory | undefined> {
  const gateway = await import('@crustcore/mcp-gateway');
  const path = gateway.registryPath(setup.home);
  const first = gateway.readRegistry(path);
  if (first._tag === 'Left') return undefined;
  const usable = first.right.servers.some(
    (record) =>
      record.trust === 'trusted' &&
      (record.repositories.includes('*') || record.repositories.includes(setup.repository)),
  );
  if (!usable) return undefined;
  const [agent, secrets] = await Promise.all([import('@crustcore/agent'), import('@crustcore/secrets')]);
  const { vault } = await secrets.openUnattendedVault(setup.home, setup.env);
  let last = first.right;
  // Re-read on use so a person's `crustcore mcp approve` counts in a running task; a bad file keeps the last good one.
  const registry = () => {
    const read = gateway.readRegistry(path);
    if (read._tag === 'Right') last = read.right;
    return last;
  };
  return (worktree) =>
    new gateway.McpGateway({
      registry,
      repository: setup.repository,
      worktree,
      secrets: vault,
      redactor: new secrets.Redactor(),
      wrap: agent.wrapUntrusted,
    });
}
