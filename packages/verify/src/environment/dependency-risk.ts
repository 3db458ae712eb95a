/**
 * A patch that adds or changes dependencies brings new third-party code
 * into the tests (and later onto the user's machine): a risk a person sees.
 * Manifests are compared by their dependency fields, so a patch that only
 * edits a package.json's scripts is not flagged; any lockfile change is.
 */
import type { ChangedFile } from '../patch.js';
import { RISK_SEVERITY, type Risk } from '../risk.js';
import { dependencyFieldsOf } from './installed.js';
import type { TreeReader } from './tree-reader.js';

const LOCKFILE_NAMES = new Set([
  'package-lock.json',
  'npm-shrinkwrap.json',
  'pnpm-lock.yaml',
  'yarn.lock',
  'uv.lock',
  'poetry.lock',
  'Pipfile.lock',
]);
const PYTHON_MANIFESTS = /(^|\/)(requirements[^/]*\.txt|pyproject\.toml|setup\.cfg|setup\.py|Pipfile)$/;

const baseName = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

/** Names of dependencies added or changed between two package.json texts. */
function changedNames(before: string | null, after: string | null): string[] {
  const fields = (text: string | null): Map<string, string> => {
    const map = new Map<string, string>();
    if (text === null) return map;
    try {
      const manifest = JSON.parse(text) as Record<string, unknown>;
      for (const field of ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies']) {
        const entries = manifest[field];
        if (typeof entries !== 'object' || entries === null) continue;
        for (const [name, spec] of Object.entries(entries)) map.set(name, String(spec));
      }
    } catch {
      // Unparsable: the field comparison below still flags it.
    }
    return map;
  };
  const old = fields(before);
  return [...fields(after).entries()].filter(([name, spec]) => old.get(name) !== spec).map(([name]) => name);
}

/** The `dependencies-changed` risk of a patch, or null. */
export async function dependencyRisk(
  files: readonly ChangedFile[],
  base: TreeReader,
  patched: TreeReader,
): Promise<Risk | null> {
  const paths: string[] = [];
  const names: string[] = [];
  for (const file of files) {
    const name = baseName(file.path);
    if (LOCKFILE_NAMES.has(name) || PYTHON_MANIFESTS.test(file.path)) {
      paths.push(file.path);
      continue;
    }
    if (name !== 'package.json') continue;
    const before = await base.readText(file.oldPath ?? file.path);
    const after = file.status === 'D' ? null : await patched.readText(file.path);
    if (dependencyFieldsOf(before) === dependencyFieldsOf(after)) continue;
    paths.push(file.path);
    names.push(...changedNames(before, after));
  }
  if (paths.length === 0) return null;
  const named = names.length === 0 ? '' : `: ${[...new Set(names)].slice(0, 10).join(', ')}`;
  return {
    kind: 'dependencies-changed',
    severity: RISK_SEVERITY['dependencies-changed'],
    detail: `the patch adds or changes dependencies${named}`,
    paths: paths.slice(0, 50),
  };
}
