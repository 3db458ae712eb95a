/**
 * `.crustcore/environment.json` in the user's checkout: what the tests need
 * that git does not carry. Read from the user's own checkout (never from a
 * worktree a worker could edit) and decoded with io-ts.
 *
 *   { "files": [".env.test", "src/generated"], "setup": ["npm", "ci", "--ignore-scripts"],
 *     "allowInstallScripts": false }
 */
import { readFileSync } from 'node:fs';
import { join, normalize } from 'node:path';
import { err, ok, type Result } from '@crustcore/kernel';
import * as t from 'io-ts';

export const ENVIRONMENT_CONFIG_PATH = '.crustcore/environment.json';

const RelativePath = new t.Type<string, string, unknown>(
  'RelativePath',
  (input): input is string => typeof input === 'string',
  (input, context) => {
    if (typeof input !== 'string') return t.failure(input, context, 'must be a string');
    const bad =
      input === '' ||
      input.startsWith('/') ||
      input.includes('\u0000') ||
      normalize(input) !== input ||
      input.split('/').some((part) => part === '..' || part === '.' || part === '.git');
    return bad ? t.failure(input, context, 'must be a normalized relative path outside .git') : t.success(input);
  },
  t.identity,
);

export const EnvironmentConfigCodec = t.exact(
  t.partial({
    /** Ignored files and directories the tests need, copied from the checkout into every worktree. */
    files: t.array(RelativePath),
    /** The setup argv (default: detected, e.g. `npm ci --ignore-scripts`). */
    setup: t.array(t.string),
    /** A person's standing approval for dependency install scripts. */
    allowInstallScripts: t.boolean,
  }),
);
export type EnvironmentConfig = t.TypeOf<typeof EnvironmentConfigCodec>;

export interface EnvironmentConfigError {
  readonly _tag: 'EnvironmentConfigError';
  readonly path: string;
  readonly message: string;
}

const MAX_FILES = 64;

/** The project's environment config; an absent file is `{}`. */
export function readEnvironmentConfig(userRoot: string): Result<EnvironmentConfigError, EnvironmentConfig> {
  const path = join(userRoot, ENVIRONMENT_CONFIG_PATH);
  const fail = (message: string) =>
    err<EnvironmentConfigError>({ _tag: 'EnvironmentConfigError', path, message: `${path}: ${message}` });
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return ok({});
    return fail(`cannot read it (${(error as Error).message})`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return fail('is not valid JSON; fix it or remove it');
  }
  const decoded = EnvironmentConfigCodec.decode(raw);
  if (decoded._tag === 'Left') {
    const first = decoded.left[0];
    const where =
      first?.context
        .map((entry) => entry.key)
        .filter((key) => key !== '')
        .join('.') ?? '';
    return fail(
      `${where === '' ? 'the file' : where} ${first?.message ?? 'has the wrong shape'}; expected {"files": ["relative/path"], "setup": ["argv"], "allowInstallScripts": false}`,
    );
  }
  if ((decoded.right.files ?? []).length > MAX_FILES) return fail(`at most ${MAX_FILES} entries in "files"`);
  if (decoded.right.setup !== undefined && decoded.right.setup.length === 0) return fail('"setup" must not be empty');
  return ok(decoded.right);
}
