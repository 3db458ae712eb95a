/**
 * Rules that need a file's content, not just its name (CONTENT_RULES in
 * patch-kinds.ts): the keys of package.json hook managers and install or test
 * scripts read, the pytest sections of shared Python config files, and
 * repositories embedded under any directory name. Pure: texts in, findings out.
 */

import { foldedName, foldPath, foldSegment } from './path-fold.js';
import type { RiskKind } from './risk.js';
import { iniSections } from './test-discovery.js';

export interface Finding {
  readonly kind: RiskKind;
  readonly detail: string;
  readonly path: string;
}

type Json = Record<string, unknown>;

function parseObject(text: string | null): Json | null | 'unreadable' {
  if (text === null) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Json) : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

const HOOK_KEYS = [
  'simple-git-hooks',
  'husky',
  'lint-staged',
  'pre-commit',
  'precommit',
  'pre-push',
  'ghooks',
  'gitHooks',
];
const INSTALL_SCRIPTS = [
  'preinstall',
  'install',
  'postinstall',
  'preuninstall',
  'uninstall',
  'postuninstall',
  'prepublish',
  'preprepare',
  'prepare',
  'postprepare',
  'prepack',
  'postpack',
  'dependencies',
];
const RUNNER_KEYS = ['jest', 'mocha', 'ava', 'vitest', 'c8', 'nyc', 'tap', 'imports'];

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
const scriptsOf = (json: Json | null): Json => {
  const scripts = json?.scripts;
  return typeof scripts === 'object' && scripts !== null ? (scripts as Json) : {};
};

/**
 * The scripts `npm test` (and the verify argv's own script) can reach: test,
 * pretest, posttest, the named script with its pre/post, and every script
 * those mention by name (`npm run x`, `pnpm x`, `run-s x`…), transitively.
 */
export function reachableScripts(scripts: Json, roots: readonly string[]): Set<string> {
  const reached = new Set<string>();
  const queue = roots.flatMap((root) => [root, `pre${root}`, `post${root}`]);
  while (queue.length > 0) {
    const name = queue.shift() as string;
    if (reached.has(name)) continue;
    reached.add(name);
    const body = scripts[name];
    if (typeof body !== 'string') continue;
    for (const other of Object.keys(scripts)) {
      if (reached.has(other)) continue;
      const escaped = other.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      if (new RegExp(`(?:^|[\\s"'=:&|;(])${escaped}(?=$|[\\s"'&|;)])`).test(body))
        queue.push(other, `pre${other}`, `post${other}`);
    }
  }
  return reached;
}

/** package.json findings: hook-manager keys, install scripts, test scripts and runner keys that changed. */
export function packageJsonFindings(
  path: string,
  before: string | null,
  after: string | null,
  verifyScripts: readonly string[] = [],
): Finding[] {
  const old = parseObject(before);
  const now = parseObject(after);
  if (now === 'unreadable' || old === 'unreadable') {
    return [{ kind: 'verify-command-changed', detail: `${path} is not a JSON object we can compare`, path }];
  }
  const findings: Finding[] = [];
  const changed = (key: string, a: Json | null, b: Json | null): boolean => !same(a?.[key], b?.[key]);
  const config = (json: Json | null): Json | null => (json?.config as Json | undefined) ?? null;
  const hooks = HOOK_KEYS.filter((key) => changed(key, old, now));
  if (changed('ghooks', config(old), config(now))) hooks.push('config.ghooks');
  if (hooks.length > 0)
    findings.push({ kind: 'git-hook-changed', detail: `${path}: git hook keys ${hooks.join(', ')}`, path });
  const oldScripts = scriptsOf(old);
  const newScripts = scriptsOf(now);
  const install = INSTALL_SCRIPTS.filter((key) => !same(oldScripts[key], newScripts[key]));
  if (install.length > 0) {
    const detail = `${path}: install-time scripts ${install.join(', ')}`;
    findings.push({ kind: 'package-manager-config-changed', detail, path });
  }
  const roots = ['test', ...verifyScripts];
  const reach = new Set([...reachableScripts(oldScripts, roots), ...reachableScripts(newScripts, roots)]);
  const tests = [...reach].filter((key) => !same(oldScripts[key], newScripts[key])).map((key) => `scripts.${key}`);
  tests.push(...RUNNER_KEYS.filter((key) => changed(key, old, now)));
  if (tests.length > 0)
    findings.push({ kind: 'verify-command-changed', detail: `${path}: ${tests.slice(0, 10).join(', ')}`, path });
  return findings;
}

const PY_SECTION: Readonly<Record<string, RegExp>> = {
  'pyproject.toml':
    /^(?:tool\.pytest(?:\..*)?|tool\.tox(?:\..*)?|tool\.hatch\.envs(?:\..*)?|project\.entry-points\.pytest11)$/,
  'setup.cfg': /^(?:tool:pytest|pytest|options\.entry_points)$/,
  'tox.ini': /^(?:pytest|tox(?::.*)?|testenv(?::.*)?)$/,
};

/** Shared Python config files: only their pytest/tox sections change what the tests run. */
export function pythonConfigFindings(path: string, before: string | null, after: string | null): Finding[] {
  const name = foldedName(path);
  const pattern = PY_SECTION[name];
  if (pattern === undefined) return [];
  const old = iniSections(before ?? '');
  const now = iniSections(after ?? '');
  const headers = new Set([...old.keys(), ...now.keys()].filter((header) => pattern.test(header)));
  const changed = [...headers].filter((header) => old.get(header) !== now.get(header));
  if (changed.length === 0) return [];
  return [{ kind: 'verify-command-changed', detail: `${path}: sections [${changed.join('], [')}]`, path }];
}

/**
 * Directories that git would open as a repository: `HEAD` beside `objects/`,
 * `refs/` or `config`, under any name (`.git` is only the usual one; a bare
 * repository can be called anything). Reported when the patch touched a file
 * of it. Names are folded: on a case-insensitive host `head` is `HEAD`.
 */
export function embeddedRepositories(treePaths: readonly string[], changed: ReadonlySet<string>): Finding[] {
  // Only a directory the patch touches something under can be reported, so only the changed
  // paths' ancestors (the top included) are listed: a 20k-file tree costs one lookup per path.
  const ancestors = new Set<string>();
  for (const path of changed) {
    const parts = path.split('/');
    for (let depth = 0; depth < parts.length; depth += 1) ancestors.add(parts.slice(0, depth).join('/'));
  }
  if (!ancestors.has('')) return [];
  // The top level holds every path's first name: collected raw and folded once per distinct name.
  const topNames = new Set<string>();
  const byDir = new Map<string, Set<string>>([['', new Set<string>()]]); // the top first, as the findings' order
  for (const path of treePaths) {
    const slash = path.indexOf('/');
    topNames.add(slash < 0 ? path : path.slice(0, slash + 1));
    if (slash < 0 || !ancestors.has(path.slice(0, slash))) continue;
    const parts = path.split('/');
    let dir = parts[0] as string;
    // Ancestors are closed under "parent of", so the first directory that is not one ends the walk.
    for (let depth = 1; depth < parts.length && ancestors.has(dir); depth += 1) {
      const part = parts[depth] as string;
      const seen = byDir.get(dir) ?? new Set<string>();
      seen.add(foldSegment(part) + (depth < parts.length - 1 ? '/' : ''));
      byDir.set(dir, seen);
      dir = `${dir}/${part}`;
    }
  }
  const folded = [...topNames].map((name) =>
    name.endsWith('/') ? `${foldSegment(name.slice(0, -1))}/` : foldSegment(name),
  );
  byDir.set('', new Set(folded));
  const findings: Finding[] = [];
  for (const [dir, children] of byDir) {
    const looksLikeRepo =
      children.has('head') && (children.has('objects/') || children.has('refs/') || children.has('config'));
    if (!looksLikeRepo) continue;
    const prefix = dir === '' ? '' : `${dir}/`;
    const touched = [...changed].find((path) => path.startsWith(prefix) && (dir !== '' || isRepoFile(path)));
    if (touched === undefined) continue;
    findings.push({ kind: 'embedded-git-repository', detail: `${dir || '.'} is a git repository`, path: touched });
  }
  return findings;
}

// At the top level only git's own file names count (a project may have a `config` file of its own).
const isRepoFile = (path: string): boolean => /^(?:head|config|objects\/|refs\/)/.test(foldPath(path).join('/'));

/** Files under the repository's own `core.hooksPath` (relative to the top of the work tree). */
export function hooksPathFindings(hooksPath: string | null, changed: ReadonlySet<string>): Finding[] {
  if (hooksPath === null || hooksPath.startsWith('/') || hooksPath.startsWith('~')) return [];
  const dir = foldPath(hooksPath.replace(/^\.\//, '').replace(/\/+$/, '')).join('/');
  if (dir === '' || dir === '.') return [];
  return [...changed]
    .filter((path) => foldPath(path).join('/').startsWith(`${dir}/`))
    .map((path) => ({ kind: 'git-hook-changed' as const, detail: `under core.hooksPath (${hooksPath})`, path }));
}
