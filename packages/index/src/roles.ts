/**
 * What a file is for, from its path alone (never its content: roles must be
 * cheap and must not change when a file's text does). The order of the
 * checks is the precedence: a workflow file is CI before it is config, a
 * test file is a test before it is source.
 */
export type FileRole = 'source' | 'test' | 'config' | 'docs' | 'ci' | 'other';

const CI_PREFIXES = ['.github/workflows/', '.gitlab-ci', '.circleci/', '.buildkite/', 'azure-pipelines', '.travis.yml'];
const CI_NAMES = new Set([
  'Jenkinsfile',
  '.gitlab-ci.yml',
  'azure-pipelines.yml',
  '.travis.yml',
  'bitbucket-pipelines.yml',
]);

const CONFIG_NAMES = new Set([
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'pyproject.toml',
  'setup.py',
  'setup.cfg',
  'requirements.txt',
  'go.mod',
  'go.sum',
  'Cargo.toml',
  'Cargo.lock',
  'Makefile',
  'Dockerfile',
  'turbo.json',
  'biome.json',
  '.gitignore',
  '.gitattributes',
  '.editorconfig',
  '.npmrc',
  '.nvmrc',
]);
const CONFIG_EXTENSIONS = ['.toml', '.yaml', '.yml', '.ini', '.cfg', '.conf', '.lock'];
const CONFIG_SUFFIXES = ['.config.ts', '.config.js', '.config.mjs', '.config.cjs', 'rc.json', 'rc.js', 'rc.cjs'];

const DOC_EXTENSIONS = ['.md', '.mdx', '.rst', '.adoc', '.txt'];
const DOC_NAMES = new Set(['LICENSE', 'COPYING', 'NOTICE', 'AUTHORS', 'CHANGELOG']);

/** Languages the indexer knows by extension: a grammar, or a plain-text fallback. */
const LANGUAGE_BY_EXTENSION: Readonly<Record<string, string>> = {
  '.ts': 'typescript',
  '.mts': 'typescript',
  '.cts': 'typescript',
  '.tsx': 'tsx',
  '.js': 'javascript',
  '.mjs': 'javascript',
  '.cjs': 'javascript',
  '.jsx': 'javascript',
  '.py': 'python',
  '.go': 'go',
  '.rs': 'rust',
  '.java': 'java',
  '.kt': 'kotlin',
  '.rb': 'ruby',
  '.php': 'php',
  '.c': 'c',
  '.h': 'c',
  '.cc': 'cpp',
  '.cpp': 'cpp',
  '.hpp': 'cpp',
  '.cs': 'csharp',
  '.swift': 'swift',
  '.scala': 'scala',
  '.sh': 'shell',
  '.bash': 'shell',
  '.sql': 'sql',
  '.lua': 'lua',
};

const baseName = (path: string): string => path.slice(path.lastIndexOf('/') + 1);
const extensionOf = (name: string): string => {
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? '' : name.slice(dot).toLowerCase();
};

export function languageOf(path: string): string | null {
  const extension = extensionOf(baseName(path));
  return Object.hasOwn(LANGUAGE_BY_EXTENSION, extension) ? (LANGUAGE_BY_EXTENSION[extension] as string) : null;
}

function isTestPath(path: string, name: string): boolean {
  if (/(?:^|\/)(?:test|tests|__tests__|spec|specs|testdata)\//.test(path)) return true;
  return /\.(?:test|spec)\.[cm]?[jt]sx?$/.test(name) || /^test_.+\.py$/.test(name) || /_test\.(?:py|go)$/.test(name);
}

export function roleOf(path: string): FileRole {
  const name = baseName(path);
  if (CI_NAMES.has(name) || CI_PREFIXES.some((prefix) => path.startsWith(prefix))) return 'ci';
  const language = languageOf(path);
  if (isTestPath(path, name) && language !== null) return 'test';
  if (CONFIG_NAMES.has(name) || CONFIG_SUFFIXES.some((suffix) => name.endsWith(suffix))) return 'config';
  if (name.startsWith('.') && language === null) return 'config';
  const extension = extensionOf(name);
  if (DOC_NAMES.has(name.replace(/\.[A-Za-z]+$/, '')) || DOC_EXTENSIONS.includes(extension)) return 'docs';
  if (path.startsWith('docs/') || path.startsWith('doc/')) return 'docs';
  if (language !== null) return 'source';
  if (CONFIG_EXTENSIONS.includes(extension) || extension === '.json') return 'config';
  return 'other';
}
