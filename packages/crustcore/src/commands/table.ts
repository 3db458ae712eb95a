/**
 * Every CLI command, in the order `--help` lists them. A row is the command's
 * spec (strings) and a loader: a command's module, and the packs it needs, are
 * imported only when that command runs, so `--help`, `<command> --help`,
 * `--version` and a mistyped name load no command at all.
 */
import type { LazyCommand } from '../cli/command.js';
import { CORE_LOADERS } from './core-loaders.js';
import { demoSpec, diffSpec, doctorSpec, exportSpec, gcSpec, inspectSpec, recoverSpec, runSpec } from './specs.js';

/** The verifier core: everything crustcore-nano carries. */
const CORE: readonly LazyCommand[] = [
  { ...demoSpec, load: CORE_LOADERS.demo },
  { ...runSpec, load: CORE_LOADERS.run },
  { ...inspectSpec, load: CORE_LOADERS.inspect },
  { ...exportSpec, load: CORE_LOADERS.export },
  { ...diffSpec, load: CORE_LOADERS.diff },
  { ...recoverSpec, load: CORE_LOADERS.recover },
  { ...gcSpec, load: CORE_LOADERS.gc },
  { ...doctorSpec, load: CORE_LOADERS.doctor },
];

export async function commandTable(): Promise<readonly LazyCommand[]> {
  // The nano build defines this as `true`, so the import below is dropped with its branch.
  if ((globalThis as { CRUSTCORE_NANO?: boolean }).CRUSTCORE_NANO !== true) {
    const { PACK_COMMANDS } = await import('./pack-commands.js');
    return [...CORE, ...PACK_COMMANDS];
  }
  return CORE;
}
