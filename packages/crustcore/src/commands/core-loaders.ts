/**
 * How the full crustcore loads a core command: each module (and what it
 * imports) on first use. crustcore-nano is one file, where a lazy module costs
 * bytes (esbuild wraps every module under a dynamic import), so build.mjs
 * swaps this module for core-loaders-eager.ts in the nano build.
 */
import type { Command } from '../cli/command.js';

export type CoreName = 'demo' | 'run' | 'inspect' | 'export' | 'diff' | 'recover' | 'gc' | 'doctor';

export const CORE_LOADERS: Readonly<Record<CoreName, () => Promise<Command>>> = {
  demo: async () => (await import('./demo.js')).demoCommand,
  run: async () => (await import('./run.js')).runCommand,
  inspect: async () => (await import('./inspect.js')).inspectCommand,
  export: async () => (await import('./export.js')).exportCommand,
  diff: async () => (await import('./diff.js')).diffCommand,
  recover: async () => (await import('./recover.js')).recoverCommand,
  gc: async () => (await import('./gc.js')).gcCommand,
  doctor: async () => (await import('./doctor.js')).doctorCommand,
};
