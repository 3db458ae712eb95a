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
import { recoverCommand } from './recover.js';
import { runCommand } from './run.js';

/** The verifier core: everything crustcore-nano carries. */
const CORE: readonly Command[] = [
  demoCommand,
  runCommand,
  inspectCommand,
  exportCommand,
  diffCommand,
  recoverCommand,
  gcCommand,
  doctorCommand,
];

export async function commandTable(): Promise<readonly Command[]> {
  // The nano build defines this as `true`, so the import below is dropped with its branch.
  if ((globalThis as { CRUSTCORE_NANO?: boolean }).CRUSTCORE_NANO !== true) {
    const { PACK_COMMANDS } = await import('./pack-commands.js');
    return [...CORE, ...PACK_COMMANDS];
  }
  return CORE;
}
