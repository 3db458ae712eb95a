/**
 * Commands that need a pack (agent, secrets, net, state, mcp). Loaded only by
 * the full crustcore; the nano build never sees this module.
 */
import type { Command } from '../cli/command.js';
import { chatCommand } from './chat.js';
import { approveCommand, cancelCommand, denyCommand, killCommand, pauseCommand, resumeCommand } from './control.js';
import { daemonCommand } from './daemon.js';
import { mcpCommand, mcpTokenCommand } from './mcp.js';
import { modelsCommand } from './models.js';
import { secretCommand } from './secret.js';
import { statusCommand } from './status.js';
import { enqueueCommand, tasksCommand } from './tasks.js';

export const PACK_COMMANDS: readonly Command[] = [
  chatCommand,
  secretCommand,
  modelsCommand,
  daemonCommand,
  enqueueCommand,
  statusCommand,
  tasksCommand,
  pauseCommand,
  resumeCommand,
  cancelCommand,
  killCommand,
  approveCommand,
  denyCommand,
  mcpCommand,
  mcpTokenCommand,
];
