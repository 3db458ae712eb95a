/**
 * `crustcore run`'s flags from the config files: which flags it takes from
 * them, and the rules that keep what was typed in charge (a typed --worker
 * means the external backend; native-agent settings in a file do not make
 * another backend's run an error). Loaded only by the full crustcore.
 */
import type { openRepository } from '@crustcore/verify';
import type { Io } from '../cli/output.js';
import { valuesWithConfig } from './load.js';

/** The flags `run` takes from the config files when they are not typed (load.ts maps them to keys). */
const CONFIG_FLAGS = [
  'verify',
  'setup',
  'approve',
  'backend',
  'worker',
  'model',
  'models-config',
  'profile',
  'thinking',
  'max-revisits',
  'timeout',
  'max-turns',
] as const;

const NATIVE_ONLY_FROM_CONFIG = ['model', 'thinking', 'max-turns'] as const;

/** The typed flags with the rest from the config files (CLI > project > user > defaults; the repository's file may only tighten). */
export async function runValuesWithConfig<V extends Readonly<Record<string, unknown>>>(
  typed: V,
  dir: string,
  io: Io,
  opened?: ReturnType<typeof openRepository>,
): Promise<{ readonly values: V; readonly fromConfig: ReadonlyMap<string, string> }> {
  // A typed --worker means the external backend, a typed other backend takes no worker: the config must not undo either.
  const flags = CONFIG_FLAGS.filter(
    (flag) =>
      !(flag === 'backend' && typed.worker !== undefined && typed.backend === undefined) &&
      !(flag === 'worker' && typed.backend !== undefined && typed.backend !== 'external'),
  );
  const configured = await valuesWithConfig(typed, flags, dir, io, opened);
  const backend = configured.values.backend ?? (configured.values.worker !== undefined ? 'external' : undefined);
  if (backend === 'native') return configured;
  // Settings of the native agent in a config file are for when it runs, not errors when another backend does.
  const values: Record<string, unknown> = { ...configured.values };
  for (const flag of NATIVE_ONLY_FROM_CONFIG) if (configured.fromConfig.has(flag)) delete values[flag];
  return { values: values as V, fromConfig: configured.fromConfig };
}
