/**
 * Every CLI command, in the order `--help` lists them. A row is the command's
 * spec (strings) and a loader: a command's module, and the packs it needs, are
 * imported only when that command runs, so `--help`, `<command> --help`,
 * `--version` and a mistyped name load no command at all.
 */
import type { LazyCommand } from '../cli/command.js';
import { CORE_COMMANDS } from './core-table.js';

export async function commandTable(): Promise<readonly LazyCommand[]> {
  // The nano build defines this as `true`, so the import below is dropped with its branch.
  if ((globalThis as { CRUSTCORE_NANO?: boolean }).CRUSTCORE_NANO !== true) {
    const { PACK_COMMANDS } = await import('./pack-commands.js');
    return [...CORE_COMMANDS, ...PACK_COMMANDS];
  }
  return CORE_COMMANDS;
}
