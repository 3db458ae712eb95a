/**
 * Which files are tests, by the runners' own discovery rules rather than by a
 * `.test.` in the name: a patch that empties `test-math.js` (node --test runs
 * it), `checks/check_math.py` (pytest with `python_files = check_*.py`) or
 * `spec/math.js` (mocha's spec config) weakens the suite just as much. The
 * rules are the union over runners, so the answer does not depend on guessing
 * which runner the verify command ends up calling. Names are folded
 * (path-fold.ts): over-matching only asks a person more often.
 */
import { foldedName, foldPath } from './path-fold.js';

const JS = '(?:[cm]?[jt]sx?)';
/** Default discovery, per runner, on the folded file name and its directories. */
const DEFAULT_NAME_RULES: readonly RegExp[] = [
  // node --test (20+): *.test.js, *-test.js, *_test.js, test-*.js, test.js (and .ts with type stripping)
  new RegExp(`^(?:.+[.\\-_]test|test-.+|test)\\.${JS}$`),
  // jest / vitest: *.spec.js, *.test.js
  new RegExp(`^.+\\.(?:spec|test)\\.${JS}$`),
  // pytest test_*.py / *_test.py; unittest discover's default pattern test*.py
  /^(?:test.*|.+_test)\.py$/,
  // go, rspec, minitest
  /^.+_test\.go$/,
  /^.+_spec\.rb$/,
  /^test_.+\.rb$/,
  /\.snap$/,
  /^conftest\.py$/,
];
/** Directories whose files a runner takes as tests or test data (node: test/**; jest: __tests__; go: testdata). */
const TEST_DIRS = new Set(['test', 'tests', '__tests__', 'spec', 'specs', 'testdata', 'fixtures', '__snapshots__']);

export interface DiscoveryConfig {
  /** Extra patterns (glob syntax, matched against the path and the file name). */
  readonly patterns: readonly string[];
}

export const NO_EXTRA_DISCOVERY: DiscoveryConfig = { patterns: [] };

/** Glob (`*`, `**`, `?`, `{a,b}`, `[...]`) to an anchored regex over folded text. */
export function globToRegex(glob: string): RegExp {
  let out = '';
  let i = 0;
  let braces = 0;
  const text = glob.replace(/^\.\//, '');
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '*' && text[i + 1] === '*') {
      out += text[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += text[i + 2] === '/' ? 3 : 2;
      continue;
    }
    if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '{') {
      braces += 1;
      out += '(?:';
    } else if (c === '}' && braces > 0) {
      braces -= 1;
      out += ')';
    } else if (c === ',' && braces > 0) out += '|';
    else if (c === '[') {
      const end = text.indexOf(']', i + 1);
      if (end > i) {
        out += `[${text
          .slice(i + 1, end)
          .replace(/^!/, '^')
          .replace(/[\\\]]/g, '\\$&')}]`;
        i = end + 1;
        continue;
      }
      out += '\\[';
    } else out += c.replace(/[.+^$()|\\{}]/g, '\\$&');
    i += 1;
  }
  return new RegExp(`^${out}$`);
}

/** True when some runner would discover `path` as a test (or as its fixtures/snapshots). */
export function isDiscoveredTest(path: string, config: DiscoveryConfig = NO_EXTRA_DISCOVERY): boolean {
  const segments = foldPath(path);
  if (segments.includes('node_modules')) return false;
  const name = segments[segments.length - 1] ?? '';
  if (segments.slice(0, -1).some((dir) => TEST_DIRS.has(dir))) return true;
  if (DEFAULT_NAME_RULES.some((rule) => rule.test(name))) return true;
  const folded = segments.join('/');
  return config.patterns.some((pattern) => {
    let regex: RegExp;
    try {
      regex = globToRegex(foldPath(pattern.trim()).join('/'));
    } catch {
      return false; // extglob syntax we do not model: the default rules still apply
    }
    return regex.test(folded) || regex.test(name);
  });
}

/** Sections of an INI/TOML text, by header, with their lines (header excluded). */
export function iniSections(text: string): Map<string, string> {
  const sections = new Map<string, string>();
  let current = '';
  for (const line of text.replace(/\r\n/g, '\n').split('\n')) {
    const header = /^\s*\[+\s*([^\]]+?)\s*\]+\s*(?:[#;].*)?$/.exec(line);
    if (header !== null) {
      current = (header[1] as string).toLowerCase().replace(/["']/g, '');
      continue;
    }
    sections.set(current, `${sections.get(current) ?? ''}${line}\n`);
  }
  return sections;
}

/** `python_files` patterns from a pytest config section's text (INI `key = a b` or TOML `key = ["a", "b"]`). */
function pythonFiles(section: string): string[] {
  const match = /^\s*python_files\s*=\s*(.+(?:\n[ \t]+.+)*)/m.exec(section);
  if (match === null) return [];
  return (match[1] as string)
    .replace(/[[\]"',]/g, ' ')
    .split(/\s+/)
    .filter((word) => word !== '');
}

/** mocha `spec` entries from `.mocharc.json`/`.yml` text, or package.json's `mocha` key. */
function mochaSpecs(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/["']?spec["']?\s*[:=]\s*(\[[^\]]*\]|["'][^"']+["']|\S+)/g)) {
    for (const item of (match[1] as string).matchAll(/["']?([^"',[\]\s]+)["']?/g)) found.push(item[1] as string);
  }
  return found;
}

/** Discovery patterns a repository's own config adds (pytest `python_files`, mocha `spec`, jest `testMatch`). */
export function discoveryFromConfigs(configs: ReadonlyMap<string, string>): DiscoveryConfig {
  const patterns: string[] = [];
  for (const [path, text] of configs) {
    const name = foldedName(path);
    if (/^(?:pytest\.ini|\.pytest\.ini|tox\.ini|setup\.cfg|pyproject\.toml)$/.test(name)) {
      for (const [header, body] of iniSections(text)) {
        if (/^(?:pytest|tool:pytest|tool\.pytest(?:\..+)?)$/.test(header)) patterns.push(...pythonFiles(body));
      }
    } else if (/^\.mocharc/.test(name)) patterns.push(...mochaSpecs(text));
    else if (name === 'package.json') patterns.push(...packageJsonPatterns(text));
  }
  return { patterns: patterns.slice(0, 200) };
}

function packageJsonPatterns(text: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [];
  }
  if (typeof parsed !== 'object' || parsed === null) return [];
  const record = parsed as Record<string, unknown>;
  const out: string[] = [];
  const jest = record.jest as Record<string, unknown> | undefined;
  if (jest !== undefined && Array.isArray(jest.testMatch))
    out.push(...jest.testMatch.filter((p): p is string => typeof p === 'string'));
  const mocha = record.mocha as Record<string, unknown> | undefined;
  if (mocha !== undefined) {
    const spec = mocha.spec;
    if (typeof spec === 'string') out.push(spec);
    if (Array.isArray(spec)) out.push(...spec.filter((p): p is string => typeof p === 'string'));
  }
  return out;
}

/** Config files whose text can add discovery patterns (read from the base tree). */
export const isDiscoveryConfig = (path: string): boolean =>
  /^(?:pytest\.ini|\.pytest\.ini|tox\.ini|setup\.cfg|pyproject\.toml|package\.json|\.mocharc(?:\.[\w]+)?)$/.test(
    foldedName(path),
  );
