/**
 * Which changed files an environment is set up from. A patch that changes
 * none of them meets the same environment as its base: an environment
 * failure then is not the patch's to fix, and a verify run can be set up
 * before the patch is applied.
 */
import type { UnverifiedPatch } from '../patch.js';

/** Classes of the files an environment is set up from (manifests, lockfiles, package-manager config). */
const ENVIRONMENT_INPUT_CLASSES: ReadonlySet<string> = new Set(['lockfile', 'config', 'package-manager-config']);
/**
 * The same files by name, wherever they are and whatever else they are classed as (`.npmrc` is a
 * secret-looking file, a workspace's package.json under `test/` a test): the setup reads them.
 */
const ENVIRONMENT_INPUT_NAMES =
  /^(?:package\.json|package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|pnpm-workspace\.yaml|bun\.lockb?|\.npmrc|\.yarnrc(?:\.yml)?|\.pnpmfile\.cjs|\.nvmrc|\.node-version|pyproject\.toml|poetry\.lock|uv\.lock|Pipfile(?:\.lock)?|requirements[^/]*\.txt|setup\.py|setup\.cfg)$/;

const isEnvironmentInput = (path: string | null, fileClass: string): boolean =>
  ENVIRONMENT_INPUT_CLASSES.has(fileClass) ||
  (path !== null && ENVIRONMENT_INPUT_NAMES.test(path.slice(path.lastIndexOf('/') + 1)));

/** Whether the patch touches what the environment is set up from: then its failure may be the patch's. */
export const changesEnvironmentInputs = (patch: Pick<UnverifiedPatch, 'files'>): boolean =>
  patch.files.some(
    (file) => isEnvironmentInput(file.path, file.fileClass) || isEnvironmentInput(file.oldPath ?? null, ''),
  );
