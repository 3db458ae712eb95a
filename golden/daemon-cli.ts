/**
 * The crustcore CLI from source, for the daemon and MCP golden tests: the
 * lead's command table first, plus the daemon/MCP commands in case the table
 * does not list them yet. Run with `node --conditions=source --import tsx`.
 */
import { UsageError } from '../packages/crustcore/src/cli/command.js';
import { ExitCode } from '../packages/crustcore/src/cli/exit-codes.js';
import { processIo, writeLine } from '../packages/crustcore/src/cli/output.js';
import {
  approveCommand,
  cancelCommand,
  denyCommand,
  killCommand,
  pauseCommand,
  resumeCommand,
} from '../packages/crustcore/src/commands/control.js';
import { daemonCommand } from '../packages/crustcore/src/commands/daemon.js';
import { mcpCommand, mcpTokenCommand } from '../packages/crustcore/src/commands/mcp.js';
import { statusCommand } from '../packages/crustcore/src/commands/status.js';
import { commandTable } from '../packages/crustcore/src/commands/table.js';
import { enqueueCommand, tasksCommand } from '../packages/crustcore/src/commands/tasks.js';
import { main } from '../packages/crustcore/src/main.js';

const ours = [
  daemonCommand,
  statusCommand,
  tasksCommand,
  enqueueCommand,
  pauseCommand,
  resumeCommand,
  cancelCommand,
  killCommand,
  approveCommand,
  denyCommand,
  mcpCommand,
  mcpTokenCommand,
];

const argv = process.argv.slice(2);
const io = processIo();
const wired = new Set((await commandTable()).map((command) => command.name));
const command = ours.find((candidate) => candidate.name === argv[0] && !wired.has(candidate.name));
async function run(): Promise<number> {
  try {
    return command === undefined ? await main(argv, io) : await command.run(argv.slice(1), io);
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      writeLine(io.stderr, `error: ${(error as Error).message}`);
      return ExitCode.usage;
    }
    writeLine(io.stderr, `internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return ExitCode.internal;
  }
}

void run().then((code) => {
  process.exitCode = code;
});
