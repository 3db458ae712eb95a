/**
 * The config layers for a command run in (or on) a directory, and the
 * command-line values with the config filled in where a flag was not typed.
 * Loaded only by the commands that read config (`run` and `chat` in the full
 * crustcore, and `config`); crustcore-nano reads flags only.
 */
import { realpathSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { openRepository } from '@crustcore/verify';
import { UsageError } from '../cli/command.js';
import { type Io, writeLine } from '../cli/output.js';
import { ConfigFileError } from './document.js';
import { readProjectConfig, readUserConfig } from './files.js';
import type { ConfigValue } from './keys.js';
import { type ConfigSource, type Layers, loosenWarnings, type ResolvedSetting, resolveSettings } from './resolve.js';

/** Command-line flag (as parseArgs names it) → config key. */
export const FLAG_KEYS: Readonly<Record<string, string>> = {
  verify: 'verify',
  setup: 'setup',
  approve: 'approve',
  backend: 'backend',
  worker: 'worker',
  model: 'model',
  'models-config': 'modelsConfig',
  profile: 'profile',
  thinking: 'thinking',
  'max-revisits': 'budgets.maxRevisits',
  timeout: 'budgets.timeoutSeconds',
  'max-turns': 'budgets.maxTurns',
};

/** The repository root containing `dir` (real path), or null outside a repository. */
export async function repositoryRoot(dir: string, opened?: ReturnType<typeof openRepository>): Promise<string | null> {
  const repo = await (opened ?? openRepository(dir));
  if (repo._tag === 'Left') return null;
  try {
    return realpathSync(repo.right.root);
  } catch {
    return null;
  }
}

/** Both files, decoded; a bad file is a usage error (exit 2) naming the file, the key and the fix. */
export async function loadLayers(
  io: Io,
  dir: string,
  cli: ReadonlyMap<string, ConfigValue>,
  opened?: ReturnType<typeof openRepository>,
): Promise<Layers> {
  const repository = await repositoryRoot(dir, opened);
  try {
    const user = readUserConfig(io.env);
    const project = repository === null ? null : readProjectConfig(repository);
    return {
      cli,
      user: user.document,
      userFile: user.path,
      project: project?.document ?? null,
      projectFile: project?.path ?? '.crustcore/config.json',
      repository,
    };
  } catch (error) {
    if (error instanceof ConfigFileError) throw new UsageError(`config: ${error.message}`);
    throw error;
  }
}

/** Prints, on stderr, each project value that was ignored and the project's ignored keys. */
export function warnAboutProject(io: Io, layers: Layers, settings: readonly ResolvedSetting[]): void {
  const lines = [
    ...loosenWarnings(settings, layers.projectFile),
    ...(layers.project?.notes ?? []).map((note) => `${layers.projectFile}: ${note}`),
  ];
  for (const line of lines) writeLine(io.stderr, `${io.err.yellow('warning:')} ${line}`);
}

/** A config path is relative to the file that names it; the command line's to the working directory. */
function pathFrom(setting: ResolvedSetting, layers: Layers, io: Io): string {
  const value = String(setting.value);
  if (isAbsolute(value)) return value;
  if (setting.source === 'project' && layers.repository !== null) return resolve(dirname(layers.projectFile), value);
  if (setting.source === 'user') return resolve(dirname(layers.userFile), value);
  return resolve(io.cwd, value);
}

export interface ConfiguredValues<V> {
  readonly values: V;
  /** Flags filled from a config file, and which file ('user' also for a project value the user trusts). */
  readonly fromConfig: ReadonlyMap<string, Exclude<ConfigSource, 'cli'>>;
}

/**
 * `values` with every flag in `flags` that was not typed taken from the
 * config (as the text the flag would have had). Warnings about ignored
 * project values go to stderr.
 */
export async function valuesWithConfig<V extends Readonly<Record<string, unknown>>>(
  values: V,
  flags: readonly string[],
  dir: string,
  io: Io,
  opened?: ReturnType<typeof openRepository>,
): Promise<ConfiguredValues<V>> {
  const cli = new Map<string, ConfigValue>();
  for (const flag of flags) {
    const typed = values[flag];
    const key = FLAG_KEYS[flag];
    if (key !== undefined && typeof typed === 'string') cli.set(key, typed);
  }
  const layers = await loadLayers(io, dir, cli, opened);
  const settings = resolveSettings(layers);
  warnAboutProject(io, layers, settings);
  const filled: Record<string, unknown> = { ...values };
  const fromConfig = new Map<string, Exclude<ConfigSource, 'cli'>>();
  for (const flag of flags) {
    const setting = settings.find((candidate) => candidate.key === FLAG_KEYS[flag]);
    if (setting === undefined || setting.value === undefined) continue;
    if (setting.source !== 'user' && setting.source !== 'project') continue;
    filled[flag] = flag === 'models-config' ? pathFrom(setting, layers, io) : String(setting.value);
    // A project value the user trusts counts as theirs (a trusted `verify` is their approval of it).
    fromConfig.set(flag, setting.trusted === true ? 'user' : setting.source);
  }
  return { values: filled as V, fromConfig };
}
