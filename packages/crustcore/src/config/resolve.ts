/**
 * Precedence and the trust rule, as pure functions: CLI > project > user >
 * defaults, where a project value (the repository's own file: untrusted) is
 * taken only when it tightens what it would replace (the user's value, else
 * the default) or when the user's config trusts that exact value for that
 * repository. A loosening value is ignored with a warning that names the key
 * and says how a person accepts it.
 */
import type { ConfigDocument, TrustEntry } from './document.js';
import { CONFIG_KEYS, type ConfigKeySpec, type ConfigValue } from './keys.js';

export type ConfigSource = 'cli' | 'project' | 'user' | 'default';

export interface ResolvedSetting {
  readonly key: string;
  readonly value: ConfigValue | undefined;
  readonly source: ConfigSource | 'unset';
  /** A project value that was not taken, and why. */
  readonly ignored?: { readonly value: ConfigValue; readonly reason: string };
  /** The project value was taken because the user trusts it. */
  readonly trusted?: boolean;
}

export interface Layers {
  readonly cli: ReadonlyMap<string, ConfigValue>;
  readonly user: ConfigDocument | null;
  readonly userFile: string;
  readonly project: ConfigDocument | null;
  readonly projectFile: string;
  /** The repository root (real path) the project file belongs to; trust entries name it. */
  readonly repository: string | null;
}

/** Why a project value loosens what it replaces, or null when it may stand. */
export function loosening(spec: ConfigKeySpec, value: ConfigValue, replaced: ConfigValue | undefined): string | null {
  const rule = spec.project;
  switch (rule.kind) {
    case 'suggest':
      return null;
    case 'smaller':
      return replaced === undefined || Number(value) <= Number(replaced)
        ? null
        : `raises the budget above ${JSON.stringify(replaced)}`;
    case 'stricter': {
      // With nothing to replace, only the strictest choice is certainly not a loosening.
      const limit = replaced === undefined ? 0 : rule.order.indexOf(String(replaced));
      return rule.order.indexOf(String(value)) <= limit
        ? null
        : `is less strict than ${replaced === undefined ? 'not setting it' : JSON.stringify(replaced)}`;
    }
    case 'person':
      return value === replaced
        ? null
        : 'is a choice only a person makes (what runs, which model and endpoint see your code and keys)';
  }
}

const isTrusted = (trust: readonly TrustEntry[], repository: string | null, key: string, value: ConfigValue): boolean =>
  repository !== null &&
  trust.some((entry) => entry.repository === repository && entry.key === key && entry.value === value);

function resolveOne(spec: ConfigKeySpec, layers: Layers): ResolvedSetting {
  const key = spec.key;
  const fromUser = layers.user?.values.get(key);
  const replaced = fromUser ?? spec.defaultValue;
  const replacedSource: ConfigSource | 'unset' =
    fromUser !== undefined ? 'user' : spec.defaultValue !== undefined ? 'default' : 'unset';
  const fromProject = layers.project?.values.get(key);
  let lower: ResolvedSetting = { key, value: replaced, source: replacedSource };
  if (fromProject !== undefined) {
    const reason = loosening(spec, fromProject, replaced);
    // Trusted also matters for a value that may stand anyway: a trusted project `verify` is the user's approval.
    const trusted = isTrusted(layers.user?.trust ?? [], layers.repository, key, fromProject);
    if (reason === null || trusted)
      lower = { key, value: fromProject, source: 'project', ...(trusted ? { trusted: true } : {}) };
    else lower = { ...lower, ignored: { value: fromProject, reason } };
  }
  const fromCli = layers.cli.get(key);
  return fromCli === undefined ? lower : { ...lower, value: fromCli, source: 'cli' };
}

export function resolveSettings(layers: Layers): readonly ResolvedSetting[] {
  return CONFIG_KEYS.map((spec) => resolveOne(spec, layers));
}

const shown = (value: ConfigValue): string => {
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}..."` : text;
};

/** One line per ignored project value the command line did not override anyway. */
export function loosenWarnings(settings: readonly ResolvedSetting[], projectFile: string): readonly string[] {
  return settings.flatMap((setting) => {
    if (setting.ignored === undefined || setting.source === 'cli') return [];
    const spec = CONFIG_KEYS.find((candidate) => candidate.key === setting.key);
    const value = setting.ignored.value;
    const flagValue = typeof value === 'string' && /\s/.test(value) ? JSON.stringify(value) : String(value);
    return [
      `${projectFile}: "${setting.key}": ${shown(value)} ${setting.ignored.reason}, so it is ignored (a repository's config may only tighten policy). ` +
        `To accept it: pass ${spec?.flag ?? `--${setting.key}`} ${flagValue}, or run "crustcore config trust ${setting.key}" in this repository to trust this exact value.`,
    ];
  });
}
