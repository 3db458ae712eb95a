/**
 * Commands that need a pack (agent, secrets, net, state, mcp). Loaded only by
 * the full crustcore; the nano build never sees this module. Like the core
 * table, a row is a spec and a loader: the pack loads when the command runs.
 */
import type { Command, LazyCommand } from '../cli/command.js';
import {
  approveSpec,
  backupSpec,
  cancelSpec,
  chatSpec,
  completionSpec,
  configSpec,
  daemonSpec,
  denySpec,
  enqueueSpec,
  indexSpec,
  killSpec,
  mcpSpec,
  mcpTokenSpec,
  memorySpec,
  modelsSpec,
  pauseSpec,
  releaseSpec,
  restoreSpec,
  resumeSpec,
  secretSpec,
  statusSpec,
  tasksSpec,
} from './pack-specs.js';

const control = async () => import('./control.js');
const tasks = async () => import('./tasks.js');
const mcp = async () => import('./mcp.js');

/** The `mcp` command: a registry action when the first word names one, else the MCP server. */
async function mcpWithRegistry(): Promise<Command> {
  const registry = await import('./mcp-servers.js');
  return {
    ...mcpSpec,
    run: async (args, io) =>
      registry.isRegistryAction(args[0])
        ? registry.runRegistryCommand(args, io)
        : (await mcp()).mcpCommand.run(args, io),
  };
}

/** The `daemon` command: `daemon install-unit` writes the systemd user unit, anything else runs the daemon. */
async function daemonWithUnit(): Promise<Command> {
  return {
    ...daemonSpec,
    run: async (args, io) =>
      args[0] === 'install-unit'
        ? (await import('./daemon-unit.js')).installUnit(args.slice(1), io)
        : (await import('./daemon.js')).daemonCommand.run(args, io),
  };
}

export const PACK_COMMANDS: readonly LazyCommand[] = [
  { ...chatSpec, load: async () => (await import('./chat.js')).chatCommand },
  { ...secretSpec, load: async () => (await import('./secret.js')).secretCommand },
  { ...configSpec, load: async () => (await import('./config.js')).configCommand },
  { ...modelsSpec, load: async () => (await import('./models.js')).modelsCommand },
  { ...daemonSpec, load: async () => daemonWithUnit() },
  { ...enqueueSpec, load: async () => (await tasks()).enqueueCommand },
  { ...statusSpec, load: async () => (await import('./status.js')).statusCommand },
  { ...tasksSpec, load: async () => (await tasks()).tasksCommand },
  { ...pauseSpec, load: async () => (await control()).pauseCommand },
  { ...resumeSpec, load: async () => (await control()).resumeCommand },
  { ...cancelSpec, load: async () => (await control()).cancelCommand },
  { ...killSpec, load: async () => (await control()).killCommand },
  { ...approveSpec, load: async () => (await control()).approveCommand },
  { ...denySpec, load: async () => (await control()).denyCommand },
  // `mcp add|list|remove|import|approve` is the gateway's registry; `mcp [--flags]` is still the server.
  { ...mcpSpec, load: async () => mcpWithRegistry() },
  { ...mcpTokenSpec, load: async () => (await mcp()).mcpTokenCommand },
  { ...indexSpec, load: async () => (await import('./index-command.js')).indexCommand },
  { ...memorySpec, load: async () => (await import('./memory.js')).memoryCommand },
  { ...releaseSpec, load: async () => (await import('./release.js')).releaseCommand },
  { ...backupSpec, load: async () => (await import('./backup.js')).backupCommand },
  { ...restoreSpec, load: async () => (await import('./backup.js')).restoreCommand },
  { ...completionSpec, load: async () => (await import('./completion.js')).completionCommand },
];
