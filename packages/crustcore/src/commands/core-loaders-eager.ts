/**
 * crustcore-nano's core-loaders.ts (build.mjs substitutes it): the core
 * commands imported up front, as nano always did, so the one-file bundle does
 * not grow by the wrappers lazy modules need.
 */
import type { Command } from '../cli/command.js';
import type { CoreName } from './core-loaders.js';
import { demoCommand } from './demo.js';
import { diffCommand } from './diff.js';
import { doctorCommand } from './doctor.js';
import { exportCommand } from './export.js';
import { gcCommand } from './gc.js';
import { inspectCommand } from './inspect.js';
import { recoverCommand } from './recover.js';
import { runCommand } from './run.js';

const ready =
  (command: Command): (() => Promise<Command>) =>
  async () =>
    command;

export const CORE_LOADERS: Readonly<Record<CoreName, () => Promise<Command>>> = {
  demo: ready(demoCommand),
  run: ready(runCommand),
  inspect: ready(inspectCommand),
  export: ready(exportCommand),
  diff: ready(diffCommand),
  recover: ready(recoverCommand),
  gc: ready(gcCommand),
  doctor: ready(doctorCommand),
};
