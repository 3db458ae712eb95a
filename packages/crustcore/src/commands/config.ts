/**
 * `crustcore config get KEY | set KEY VALUE [--project] | unset KEY [--project] | list [--json] | trust KEY`
 *
 * Reads and writes the user file ($XDG_CONFIG_HOME/crustcore/config.json,
 * else ~/.config/crustcore/config.json) and, with --project, the repository's
 * .crustcore/config.json. `get` and `list` show the value in force and where
 * it came from (project values that loosen policy are shown as ignored);
 * `trust KEY` records, in the user file, that the repository's current value
 * of KEY is accepted (only that exact value, only for that repository).
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type Command, UsageError } from '../cli/command.js';
import { ExitCode } from '../cli/exit-codes.js';
import { type Io, writeLine } from '../cli/output.js';
import { type ConfigDocument, ConfigFileError, encodeDocument, MAX_TRUST_ENTRIES } from '../config/document.js';
import { projectConfigPath, readProjectConfig, readUserConfig } from '../config/files.js';
import { CONFIG_KEYS, type ConfigValue, keySpec, similarKeys } from '../config/keys.js';
import { loadLayers, repositoryRoot, warnAboutProject } from '../config/load.js';
import { type Layers, type ResolvedSetting, resolveSettings } from '../config/resolve.js';
import { configSpec } from './pack-specs.js';

function specFor(key: string) {
  const spec = keySpec(key);
  if (spec !== undefined) return spec;
  const near = similarKeys(key);
  throw new UsageError(
    `unknown config key "${key}"${near.length > 0 ? ` (did you mean ${near.join(' or ')}?)` : ''}; keys: ${CONFIG_KEYS.map((s) => s.key).join(', ')}`,
  );
}

/** A value typed for `set`, decoded with the same codec a file's value is. */
function parseValue(key: string, text: string): ConfigValue {
  const spec = specFor(key);
  const candidate: unknown = spec.key.startsWith('budgets.') && /^\d+$/.test(text) ? Number(text) : text;
  const decoded = spec.codec.decode(candidate);
  if (decoded._tag === 'Left')
    throw new UsageError(`config ${key}: expected ${spec.expected}, got ${JSON.stringify(text)}`);
  return decoded.right;
}

const sourceText = (setting: ResolvedSetting, layers: Layers): string => {
  if (setting.source === 'user') return `user (${layers.userFile})`;
  if (setting.source === 'project')
    return `project (${layers.projectFile})${setting.trusted === true ? ', trusted by you' : ''}`;
  return setting.source;
};

function listText(io: Io, settings: readonly ResolvedSetting[], layers: Layers): string {
  const lines = [
    `${io.out.bold('user file')}: ${layers.userFile}`,
    `${io.out.bold('project file')}: ${layers.repository === null ? '(not in a repository)' : layers.projectFile}`,
    '',
  ];
  for (const setting of settings) {
    const value = setting.value === undefined ? io.out.dim('(not set)') : JSON.stringify(setting.value);
    lines.push(`${setting.key} = ${value}  ${io.out.dim(sourceText(setting, layers))}`);
    if (setting.ignored !== undefined)
      lines.push(
        `  ${io.out.yellow('ignored')} project value ${JSON.stringify(setting.ignored.value)}: ${setting.ignored.reason}`,
      );
  }
  return lines.join('\n');
}

const asJson = (settings: readonly ResolvedSetting[], layers: Layers): unknown => ({
  userFile: layers.userFile,
  projectFile: layers.repository === null ? null : layers.projectFile,
  settings: settings.map((s) => ({
    key: s.key,
    value: s.value ?? null,
    source: s.source,
    ...(s.trusted === true ? { trusted: true } : {}),
    ...(s.ignored === undefined ? {} : { ignored: s.ignored }),
  })),
});

/** Writes a document next to itself and renames it into place: a crash leaves the old file or the new, never half. */
function writeDocument(
  { path, document, shared }: Target,
  change: (values: Map<string, ConfigValue>, trust: ConfigDocument['trust'][number][]) => void,
): void {
  const values = new Map(document?.values ?? []);
  const trust = [...(document?.trust ?? [])];
  change(values, trust);
  if (trust.length > MAX_TRUST_ENTRIES)
    throw new UsageError(`config: at most ${MAX_TRUST_ENTRIES} trust entries; remove some from ${path}`);
  // The user file is private; a repository's file is meant to be committed and read by others.
  mkdirSync(dirname(path), { recursive: true, mode: shared ? 0o755 : 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, encodeDocument(values, trust), { mode: shared ? 0o644 : 0o600 });
  renameSync(temporary, path);
}

interface Options {
  readonly dir: string;
  readonly project: boolean;
  readonly json: boolean;
}

interface Target {
  readonly path: string;
  readonly document: ConfigDocument | null;
  /** The repository's file (committed, read by others), not the user's private one. */
  readonly shared: boolean;
}

async function targetFile(io: Io, options: Options): Promise<Target> {
  if (!options.project) return { ...readUserConfig(io.env), shared: false };
  const root = await repositoryRoot(options.dir);
  if (root === null) throw new UsageError(`--project: ${options.dir} is not in a git repository`);
  return { ...readProjectConfig(root), shared: true };
}

async function getOrList(io: Io, options: Options, key: string | null): Promise<ExitCode> {
  if (key !== null) specFor(key);
  const layers = await loadLayers(io, options.dir, new Map());
  const settings = resolveSettings(layers);
  if (key === null) {
    warnAboutProject(io, layers, settings);
    writeLine(
      io.stdout,
      options.json ? JSON.stringify(asJson(settings, layers), null, 2) : listText(io, settings, layers),
    );
    return ExitCode.ok;
  }
  const setting = settings.find((s) => s.key === key) as ResolvedSetting;
  if (options.json)
    writeLine(io.stdout, JSON.stringify((asJson([setting], layers) as { settings: unknown[] }).settings[0]));
  else if (setting.value === undefined) writeLine(io.stderr, io.err.dim(`${key} is not set`));
  else writeLine(io.stdout, String(setting.value));
  return ExitCode.ok;
}

async function setValue(io: Io, options: Options, key: string, text: string | undefined): Promise<ExitCode> {
  const value = text === undefined ? undefined : parseValue(key, text);
  specFor(key);
  const target = await targetFile(io, options);
  const { path } = target;
  writeDocument(target, (values) => {
    if (value === undefined) values.delete(key);
    else values.set(key, value);
  });
  writeLine(
    io.stdout,
    value === undefined ? `unset ${key} in ${path}` : `${key} = ${JSON.stringify(value)} in ${path}`,
  );
  // A value written to the repository's file that loosens policy will be ignored: say so now.
  if (target.shared && value !== undefined) {
    const layers = await loadLayers(io, options.dir, new Map());
    const settings = resolveSettings(layers).filter((setting) => setting.key === key);
    warnAboutProject(io, { ...layers, project: null }, settings);
  }
  return ExitCode.ok;
}

async function trustValue(io: Io, options: Options, key: string): Promise<ExitCode> {
  specFor(key);
  const repository = await repositoryRoot(options.dir);
  if (repository === null) throw new UsageError(`config trust: ${options.dir} is not in a git repository`);
  const value = readProjectConfig(repository).document?.values.get(key);
  if (value === undefined) throw new UsageError(`config trust: ${projectConfigPath(repository)} does not set ${key}`);
  const user = readUserConfig(io.env);
  const { path } = user;
  writeDocument({ ...user, shared: false }, (_values, trust) => {
    const kept = trust.filter((entry) => !(entry.repository === repository && entry.key === key));
    trust.splice(0, trust.length, ...kept, { repository, key, value });
  });
  writeLine(
    io.stdout,
    `trusted ${key} = ${JSON.stringify(value)} from ${repository} (recorded in ${path}); a different value will need your trust again`,
  );
  return ExitCode.ok;
}

export const configCommand: Command = {
  ...configSpec,
  async run(args, io) {
    const { values, positionals } = parseArgs({
      args: [...args],
      options: {
        project: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        dir: { type: 'string' },
      },
      allowPositionals: true,
      strict: true,
    });
    const [action = 'list', key, value] = positionals;
    const options: Options = { dir: resolve(io.cwd, values.dir ?? '.'), project: values.project, json: values.json };
    const takes: Readonly<Record<string, number>> = { list: 0, get: 1, set: 2, unset: 1, trust: 1 };
    const arity = takes[action];
    if (arity === undefined)
      throw new UsageError(`unknown config action "${action}"; use get, set, unset, list or trust`);
    if (positionals.length > 0 && positionals.length - 1 !== arity)
      throw new UsageError(`config ${action} takes ${['no arguments', 'a key', 'a key and a value'][arity]}`);
    try {
      if (action === 'list') return await getOrList(io, options, null);
      if (action === 'get') return await getOrList(io, options, key as string);
      if (action === 'set') return await setValue(io, options, key as string, value as string);
      if (action === 'unset') return await setValue(io, options, key as string, undefined);
      return await trustValue(io, options, key as string);
    } catch (error) {
      if (error instanceof ConfigFileError) throw new UsageError(`config: ${error.message}`);
      throw error;
    }
  },
};
