/** The executable of the ES module build and of nano: starts the CLI (see cli/start.ts). */
import { startCli } from './cli/start.js';

startCli();
