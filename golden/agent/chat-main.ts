/**
 * Runs `crustcore chat` from source (the command is not in the CLI's table
 * yet): `node --conditions=source --import tsx golden/agent/chat-main.ts …`.
 */
import { processIo } from '../../packages/crustcore/src/cli/output.js';
import { chatCommand } from '../../packages/crustcore/src/commands/chat.js';

const code = await chatCommand.run(process.argv.slice(2), processIo());
process.exit(code);
