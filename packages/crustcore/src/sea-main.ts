/**
 * The single executable's entry (scripts/sea.mjs builds it; docs/single-executable.md). Built with a
 * start-up snapshot, every module was evaluated when the executable was made, and the CLI starts
 * from the snapshot; without one, it starts here at once.
 */
import { startupSnapshot } from 'node:v8';
import { startCli } from './cli/start.js';

if (startupSnapshot.isBuildingSnapshot()) startupSnapshot.setDeserializeMainFunction(startCli);
else startCli();
