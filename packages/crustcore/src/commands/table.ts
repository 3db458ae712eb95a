/**
 * Every CLI command, in the order `--help` lists them.
 */
import type { Command } from '../cli/command.js';
import { demoCommand } from './demo.js';

export function commandTable(): readonly Command[] {
  return [demoCommand];
}
