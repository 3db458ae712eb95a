/**
 * Backends that live in packs (kept out of the nano bundle). Each loads its
 * pack only when asked for; a missing pack is an error that says what to do.
 */
import type { SandboxExecCap } from '@crustcore/sandbox';
import type { CodingBackend } from '@crustcore/verify';
import { UsageError } from '../cli/command.js';
import type { ToolGate } from '../runtime/tool-gate-types.js';

export const PACK_BACKENDS: readonly string[] = ['codex', 'claude', 'native'];

export interface PackBackendContext {
  readonly workerCap: () => SandboxExecCap;
  readonly env: NodeJS.ProcessEnv;
  readonly goal: string;
  /** The kernel-mediated tool gate (native agent). */
  readonly toolGate: ToolGate;
  /** $CRUSTCORE_HOME. */
  readonly home: string;
  /** Extra options from the command line (e.g. --model, --replay FILE, --record FILE). */
  readonly options: Readonly<Record<string, string>>;
}

interface BackendFactoryModule {
  readonly createBackend?: (name: string, context: PackBackendContext) => Promise<CodingBackend>;
}

export async function loadPackBackend(name: string, context: PackBackendContext): Promise<CodingBackend> {
  const pack = name === 'native' ? '@crustcore/agent' : '@crustcore/workers';
  let module: BackendFactoryModule;
  try {
    module = (await import(pack)) as BackendFactoryModule;
  } catch {
    throw new UsageError(`the ${name} backend needs ${pack}, which is not installed here (npm install ${pack})`);
  }
  if (typeof module.createBackend !== 'function')
    throw new UsageError(`${pack} does not provide the ${name} backend yet`);
  return module.createBackend(name, context);
}
