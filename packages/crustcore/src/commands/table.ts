/**
 * Every CLI command, in the order `--help` lists them.
 */
import type { Command } from '../cli/command.js';
import { demoCommand } from './demo.js';
import { diffCommand } from './diff.js';
import { doctorCommand } from './doctor.js';
import { exportCommand } from './export.js';
import { gcCommand } from './gc.js';
import { inspectCommand } from './inspect.js';
import { modelsCommand } from './models.js';
import { recoverCommand } from './recover.js';
import { runCommand } from './run.js';
import { secretCommand } from './secret.js';

export function commandTable(): readonly Command[] {
  return [
    demoCommand,
    runCommand,
    inspectCommand,
    exportCommand,
    diffCommand,
    recoverCommand,
    gcCommand,
    doctorCommand,
    secretCommand,
    modelsCommand,
  ];
}
