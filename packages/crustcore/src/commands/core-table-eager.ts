/**
 * crustcore-nano's core-table.ts (build.mjs substitutes it): the same commands
 * in the same order, imported up front as nano always did, so the one-file
 * bundle does not grow by the wrappers lazy modules need.
 */
import type { LazyCommand } from '../cli/command.js';
import { demoCommand } from './demo.js';
import { diffCommand } from './diff.js';
import { doctorCommand } from './doctor.js';
import { exportCommand } from './export.js';
import { gcCommand } from './gc.js';
import { inspectCommand } from './inspect.js';
import { recoverCommand } from './recover.js';
import { runCommand } from './run.js';

export const CORE_COMMANDS: readonly LazyCommand[] = [
  demoCommand,
  runCommand,
  inspectCommand,
  exportCommand,
  diffCommand,
  recoverCommand,
  gcCommand,
  doctorCommand,
].map((command) => ({ ...command, load: async () => command }));
