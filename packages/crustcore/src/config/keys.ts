/**
 * The settings a config file may hold (docs/config.md), one row per key:
 * its io-ts codec, its default, and how a value from the repository's own
 * file (untrusted) is judged against the value it would replace.
 *
 *  - `stricter`: an ordered choice, strictest first; the project may move
 *    towards the start only (approve deny < ask < auto).
 *  - `smaller`: a budget; the project may lower it only.
 *  - `suggest`: the project may set it, but it is treated like a detected
 *    value, never like one the user typed (verify: an unrecognized command
 *    still needs the person's --verify).
 *  - `person`: only a person chooses it (who writes the code, which model and
 *    endpoint get the user's key and code, commands run with the network):
 *    a project value different from the one it replaces is ignored.
 */
import * as t from 'io-ts';
import { suggestCommands } from '../help.js';

export type ConfigValue = string | number;

export type ProjectRule =
  | { readonly kind: 'stricter'; readonly order: readonly string[] }
  | { readonly kind: 'smaller' }
  | { readonly kind: 'suggest' }
  | { readonly kind: 'person' };

export interface ConfigKeySpec {
  readonly key: string;
  /** What the value means, for `config list` and errors. */
  readonly describe: string;
  /** Decodes a value from a file (numbers as JSON numbers). */
  readonly codec: t.Type<ConfigValue, ConfigValue, unknown>;
  /** What a value given to `config set` looks like, said in an error. */
  readonly expected: string;
  readonly defaultValue?: ConfigValue;
  readonly project: ProjectRule;
  /** The command-line flag that overrides it. */
  readonly flag: string;
}

const oneOf = (values: readonly string[]): t.Type<ConfigValue, ConfigValue, unknown> =>
  new t.Type<ConfigValue, ConfigValue, unknown>(
    `one of ${values.join('|')}`,
    (u): u is ConfigValue => typeof u === 'string' && values.includes(u),
    (u, c) => (typeof u === 'string' && values.includes(u) ? t.success(u) : t.failure(u, c)),
    t.identity,
  );

const MAX_TEXT = 4_096;
const text: t.Type<ConfigValue, ConfigValue, unknown> = new t.Type<ConfigValue, ConfigValue, unknown>(
  'non-empty text',
  (u): u is ConfigValue => typeof u === 'string',
  (u, c) =>
    typeof u === 'string' && u.trim() !== '' && u.length <= MAX_TEXT && !u.includes('\u0000')
      ? t.success(u)
      : t.failure(u, c),
  t.identity,
);

const integer = (min: number, max: number): t.Type<ConfigValue, ConfigValue, unknown> =>
  new t.Type<ConfigValue, ConfigValue, unknown>(
    `an integer from ${min} to ${max}`,
    (u): u is ConfigValue => typeof u === 'number',
    (u, c) =>
      Number.isSafeInteger(u) && (u as number) >= min && (u as number) <= max
        ? t.success(u as number)
        : t.failure(u, c),
    t.identity,
  );

const APPROVE = ['deny', 'ask', 'auto'] as const;
const PROFILE = ['readonly', 'supervised', 'full'] as const;
const THINKING = ['off', 'low', 'medium', 'high'] as const;
export const BACKENDS = ['external', 'codex', 'claude', 'native'] as const;

export const CONFIG_KEYS: readonly ConfigKeySpec[] = [
  {
    key: 'verify',
    describe: 'the test command (argv, split like a shell, never run by one)',
    codec: text,
    expected: 'a command line, e.g. "npm test"',
    project: { kind: 'suggest' },
    flag: '--verify',
  },
  {
    key: 'setup',
    describe: 'the environment set-up command run before verification',
    codec: text,
    expected: 'a command line, e.g. "npm ci"',
    project: { kind: 'person' },
    flag: '--setup',
  },
  {
    key: 'approve',
    describe: 'approval mode: deny (verify only), ask (a person decides) or auto',
    codec: oneOf(APPROVE),
    expected: APPROVE.join(', '),
    defaultValue: 'ask',
    project: { kind: 'stricter', order: APPROVE },
    flag: '--approve',
  },
  {
    key: 'backend',
    describe: 'who writes the patch',
    codec: oneOf(BACKENDS),
    expected: BACKENDS.join(', '),
    project: { kind: 'person' },
    flag: '--backend',
  },
  {
    key: 'worker',
    describe: 'the external worker command (backend external)',
    codec: text,
    expected: 'a command line',
    project: { kind: 'person' },
    flag: '--worker',
  },
  {
    key: 'model',
    describe: 'the native agent model (provider/model or a model id)',
    codec: text,
    expected: 'provider/model, e.g. anthropic/claude-sonnet-4-5',
    project: { kind: 'person' },
    flag: '--model',
  },
  {
    key: 'modelsConfig',
    describe: 'the model registry file (relative paths: from the config file)',
    codec: text,
    expected: 'a file path',
    project: { kind: 'person' },
    flag: '--models-config',
  },
  {
    key: 'profile',
    describe: 'risk profile',
    codec: oneOf(PROFILE),
    expected: PROFILE.join(', '),
    defaultValue: 'supervised',
    project: { kind: 'stricter', order: PROFILE },
    flag: '--profile',
  },
  {
    key: 'thinking',
    describe: 'native agent thinking level',
    codec: oneOf(THINKING),
    expected: THINKING.join(', '),
    project: { kind: 'stricter', order: THINKING },
    flag: '--thinking',
  },
  {
    key: 'budgets.maxRevisits',
    describe: 'attempts after the first failed verification',
    codec: integer(0, 20),
    expected: 'an integer from 0 to 20',
    defaultValue: 3,
    project: { kind: 'smaller' },
    flag: '--max-revisits',
  },
  {
    key: 'budgets.timeoutSeconds',
    describe: 'wall-time limit of a task, in seconds',
    codec: integer(1, 604_800),
    expected: 'an integer from 1 to 604800',
    defaultValue: 1_800,
    project: { kind: 'smaller' },
    flag: '--timeout',
  },
  {
    key: 'budgets.maxTurns',
    describe: 'native agent model turns per attempt',
    codec: integer(1, 1_000),
    expected: 'an integer from 1 to 1000',
    defaultValue: 40,
    project: { kind: 'smaller' },
    flag: '--max-turns',
  },
];

export const KEY_NAMES: readonly string[] = CONFIG_KEYS.map((spec) => spec.key);

export function keySpec(key: string): ConfigKeySpec | undefined {
  return CONFIG_KEYS.find((spec) => spec.key === key);
}

/** The closest key names to a mistyped one (the CLI's own "did you mean", on the key or its last part). */
export function similarKeys(key: string): readonly string[] {
  const same = KEY_NAMES.filter((name) => name.toLowerCase() === key.toLowerCase());
  if (same.length > 0) return same;
  const leaf = (name: string): string => name.split('.').pop() ?? name;
  const near = new Set(
    suggestCommands(
      key,
      KEY_NAMES.map((name) => ({ name, summary: '', usage: '' })),
    ),
  );
  const byLeaf = suggestCommands(
    leaf(key),
    KEY_NAMES.map((name) => ({ name: leaf(name), summary: '', usage: name })),
  );
  for (const name of KEY_NAMES) if (byLeaf.includes(leaf(name)) && name.includes('.')) near.add(name);
  return [...near].slice(0, 3);
}
