/**
 * What kind of file a changed path is. Drives risks: a patch that touches
 * tests, CI, lockfiles or secret-looking files needs a closer look than one
 * that only touches sources. Decided from the path alone (never content), so
 * it is cheap and the worker cannot talk its way out of it. Files the host
 * runs later or that change what verify proves come from the PATH_RULES
 * table (patch-kinds.ts), so the class and the risk can never disagree.
 */
import { type PathRiskKind, pathRulesFor } from './patch-kinds.js';
import { isDiscoveredTest } from './test-discovery.js';

export type FileClass =
  | 'secret'
  | 'git-hook'
  | 'git-repository'
  | 'agent-config'
  | 'editor-config'
  | 'shell-hook'
  | 'package-manager-config'
  | 'test-runner-config'
  | 'runner-shadow'
  | 'ci-workflow'
  | 'lockfile'
  | 'test'
  | 'config'
  | 'docs'
  | 'source';

/** The class an approval shows for a file the PATH_RULES table matched: named for what the file is. */
const CLASS_OF_RISK: Readonly<Record<PathRiskKind, FileClass>> = {
  'git-hook-changed': 'git-hook',
  'embedded-git-repository': 'git-repository',
  'agent-config-changed': 'agent-config',
  'editor-config-changed': 'editor-config',
  'shell-hook-changed': 'shell-hook',
  'package-manager-config-changed': 'package-manager-config',
  'verify-command-changed': 'test-runner-config',
  'test-runner-shadowed': 'runner-shadow',
};

const SECRET_NAMES =
  /^(?:\.env(?:\..*)?|\.envrc|\.netrc|\.npmrc|\.pypirc|\.git-credentials|credentials(?:\.\w+)?|secrets?\.(?:json|ya?ml|toml)|id_(?:rsa|dsa|ecdsa|ed25519)(?:\.pub)?|.*\.(?:pem|key|p12|pfx|jks|keystore|asc|gpg|kdbx))$/i;
const SECRET_DIRS = /(?:^|\/)(?:\.ssh|\.aws|\.gnupg|\.docker|\.kube)\//;
const CI_PATHS =
  /^(?:\.github\/workflows\/|\.github\/actions\/|\.gitlab-ci\.yml$|\.gitlab\/|\.circleci\/|\.travis\.yml$|azure-pipelines\.yml$|Jenkinsfile$|\.buildkite\/|\.drone\.yml$|bitbucket-pipelines\.yml$|\.woodpecker|\.ci\/|appveyor\.yml$)/;
const LOCKFILES =
  /^(?:package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|bun\.lockb?|Cargo\.lock|go\.sum|poetry\.lock|Pipfile\.lock|uv\.lock|Gemfile\.lock|composer\.lock|flake\.lock)$/;
const TEST_DIRS = /(?:^|\/)(?:tests?|__tests__|spec|specs|testdata|fixtures|__snapshots__)\//;
const TEST_NAMES = /(?:\.(?:test|spec)\.[cm]?[jt]sx?$|^test_.*\.py$|_test\.py$|_test\.go$|^conftest\.py$|\.snap$)/;
const CONFIG_NAMES =
  /^(?:package\.json|tsconfig(?:\..*)?\.json|pyproject\.toml|setup\.cfg|setup\.py|pytest\.ini|tox\.ini|Cargo\.toml|go\.mod|Makefile|makefile|GNUmakefile|Dockerfile|\.gitattributes|\.gitignore|\.gitmodules|\.npmignore|\.nvmrc|\.node-version|\.editorconfig|\.pre-commit-config\.yaml|(?:vitest|vite|jest|babel|webpack|rollup|eslint|prettier|biome)\.config\.[cm]?[jt]s|\.eslintrc(?:\..*)?|\.prettierrc(?:\..*)?|biome\.json|turbo\.json)$/;
const CONFIG_DIRS = /^(?:\.husky\/|\.githooks\/|\.devcontainer\/|\.vscode\/|\.idea\/)/;
const DOC_NAMES = /(?:\.(?:md|mdx|rst|txt|adoc)$|^(?:LICENSE|NOTICE|AUTHORS|CHANGELOG|COPYING)(?:\..*)?$)/i;
const DOC_DIRS = /^(?:docs?|documentation)\//;

function baseName(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? path : path.slice(slash + 1);
}

/**
 * Classes are checked most-dangerous first, so `tests/.env` is a secret and
 * `.github/workflows/test.yml` is CI.
 */
export function classifyPath(path: string): FileClass {
  const name = baseName(path);
  if (SECRET_NAMES.test(name) || SECRET_DIRS.test(`/${path}`)) return 'secret';
  const rule = pathRulesFor(path)[0];
  if (rule !== undefined) return CLASS_OF_RISK[rule.risk];
  if (CI_PATHS.test(path)) return 'ci-workflow';
  if (LOCKFILES.test(name)) return 'lockfile';
  if (TEST_DIRS.test(`/${path}`) || TEST_NAMES.test(name) || isDiscoveredTest(path)) return 'test';
  if (CONFIG_NAMES.test(name) || CONFIG_DIRS.test(path)) return 'config';
  if (DOC_DIRS.test(path) || DOC_NAMES.test(name)) return 'docs';
  return 'source';
}
