/**
 * The verifier-core commands (everything crustcore-nano carries), in the order
 * `--help` lists them. The full crustcore loads each command's module, and
 * what it imports, on first use. crustcore-nano is one file, where a lazily
 * loaded module only costs bytes (esbuild wraps every module under a dynamic
 * import), so build.mjs swaps this module for core-table-eager.ts there.
 */
import type { LazyCommand } from '../cli/command.js';
import { demoSpec, diffSpec, doctorSpec, exportSpec, gcSpec, inspectSpec, recoverSpec, runSpec } from './specs.js';

export const CORE_COMMANDS: readonly LazyCommand[] = [
  { ...demoSpec, load: async () => (await import('./demo.js')).demoCommand },
  { ...runSpec, load: async () => (await import('./run.js')).runCommand },
  { ...inspectSpec, load: async () => (await import('./inspect.js')).inspectCommand },
  { ...exportSpec, load: async () => (await import('./export.js')).exportCommand },
  { ...diffSpec, load: async () => (await import('./diff.js')).diffCommand },
  { ...recoverSpec, load: async () => (await import('./recover.js')).recoverCommand },
  { ...gcSpec, load: async () => (await import('./gc.js')).gcCommand },
  { ...doctorSpec, load: async () => (await import('./doctor.js')).doctorCommand },
];
