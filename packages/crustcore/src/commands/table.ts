/**
 * Every CLI command, in the order `--help` lists them.
 */
import type { Command } from '../cli/command.js';

export function commandTable(): readonly Command[] {
  return [];
}
