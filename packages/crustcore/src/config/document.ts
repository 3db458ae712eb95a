/**
 * A config file's JSON, decoded with io-ts key by key so that a bad file is
 * reported as the file, the key, what was expected and what to do next.
 * Unknown keys are errors, not silently dropped: a misspelled `aprove` must
 * not leave the user believing a setting is in force.
 */
import * as t from 'io-ts';
import { type ConfigValue, keySpec, similarKeys } from './keys.js';

/** A user-level acceptance of one exact value of one key in one repository's config file. */
export interface TrustEntry {
  readonly repository: string;
  readonly key: string;
  readonly value: ConfigValue;
}

export interface ConfigDocument {
  /** Flat keys (`budgets.maxTurns`) to decoded values. */
  readonly values: ReadonlyMap<string, ConfigValue>;
  readonly trust: readonly TrustEntry[];
  /** Keys present but not honoured in this layer (a project's `trust`), with the reason. */
  readonly notes: readonly string[];
}

export class ConfigFileError extends Error {
  override readonly name = 'ConfigFileError';
  constructor(
    readonly file: string,
    readonly key: string | null,
    readonly problem: string,
    readonly fix: string,
  ) {
    super(`${file}${key === null ? '' : `: key "${key}"`}: ${problem}. ${fix}`);
  }
}

export const MAX_TRUST_ENTRIES = 1_000;

const TrustCodec = t.readonlyArray(
  t.strict({ repository: t.string, key: t.string, value: t.union([t.string, t.number]) }),
);

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const shown = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

function unknownKey(file: string, key: string): ConfigFileError {
  const near = similarKeys(key);
  return new ConfigFileError(
    file,
    key,
    'is not a CrustCore setting',
    `${near.length > 0 ? `Did you mean ${near.map((name) => `"${name}"`).join(' or ')}? ` : ''}Remove it or rename it; docs/config.md lists the keys.`,
  );
}

function decodeValue(file: string, key: string, raw: unknown): ConfigValue {
  const spec = keySpec(key);
  if (spec === undefined) throw unknownKey(file, key);
  const decoded = spec.codec.decode(raw);
  if (decoded._tag === 'Right') return decoded.right;
  throw new ConfigFileError(
    file,
    key,
    `expected ${spec.expected}, got ${shown(raw)}`,
    `Fix the value (e.g. crustcore config set ${key} <value>) or remove the key.`,
  );
}

function decodeTrust(file: string, raw: unknown): readonly TrustEntry[] {
  const decoded = TrustCodec.decode(raw);
  if (decoded._tag === 'Left' || decoded.right.length > MAX_TRUST_ENTRIES) {
    throw new ConfigFileError(
      file,
      'trust',
      `expected at most ${MAX_TRUST_ENTRIES} entries like {"repository": "/path", "key": "approve", "value": "auto"}`,
      'Fix or remove the entry; "crustcore config trust KEY" writes a correct one.',
    );
  }
  return decoded.right;
}

/** Decodes a parsed file. `project` files may not trust anything: that key is noted and ignored. */
export function decodeDocument(file: string, parsed: unknown, layer: 'user' | 'project'): ConfigDocument {
  if (!isPlainObject(parsed))
    throw new ConfigFileError(file, null, 'is not a JSON object', 'Write {"approve": "ask"}-style settings.');
  const values = new Map<string, ConfigValue>();
  const notes: string[] = [];
  let trust: readonly TrustEntry[] = [];
  for (const [key, raw] of Object.entries(parsed)) {
    if (key === 'trust') {
      if (layer === 'user') trust = decodeTrust(file, raw);
      else notes.push(`"trust" is ignored here: only your user config (crustcore config trust KEY) can trust`);
    } else if (key === 'budgets') {
      if (!isPlainObject(raw))
        throw new ConfigFileError(file, key, 'expected an object of budgets', 'Write "budgets": {"maxTurns": 20}.');
      for (const [budget, value] of Object.entries(raw))
        values.set(`budgets.${budget}`, decodeValue(file, `budgets.${budget}`, value));
    } else {
      values.set(key, decodeValue(file, key, raw));
    }
  }
  return { values, trust, notes };
}

/** Parses a file's text; a syntax error names the file. */
export function parseDocument(file: string, text: string, layer: 'user' | 'project'): ConfigDocument {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new ConfigFileError(
      file,
      null,
      `is not valid JSON (${(error as Error).message})`,
      'Fix the syntax, or remove the file.',
    );
  }
  return decodeDocument(file, parsed, layer);
}

/** The file's JSON for a document (nested budgets, trust last), as `config set` writes it. */
export function encodeDocument(values: ReadonlyMap<string, ConfigValue>, trust: readonly TrustEntry[]): string {
  const out: Record<string, unknown> = {};
  const budgets: Record<string, ConfigValue> = {};
  for (const [key, value] of values) {
    if (key.startsWith('budgets.')) budgets[key.slice('budgets.'.length)] = value;
    else out[key] = value;
  }
  if (Object.keys(budgets).length > 0) out.budgets = budgets;
  if (trust.length > 0) out.trust = trust;
  return `${JSON.stringify(out, null, 2)}\n`;
}
