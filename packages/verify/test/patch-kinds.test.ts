/**
 * The PATH_RULES table: every kind of file the host runs later, or that
 * changes what verify proves, is named for what it is — in any case, any
 * Unicode form, with invisible characters or trailing dots, at any depth —
 * and ordinary sources are not. docs/patch-risks.md must document each row.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CONTENT_RULES,
  classifyPath,
  foldSegment,
  HUMAN_REVIEW_RISK_KINDS,
  isGitDirName,
  PATH_RULES,
  pathRulesFor,
  RISK_MEANING,
  RISK_SEVERITY,
  type RiskKind,
} from '../src/index.js';

const kindsOf = (path: string): RiskKind[] => pathRulesFor(path).map((rule) => rule.risk);

/** Ways of spelling one path component that some host treats as the same name. */
const SPELLINGS: readonly (readonly [string, (name: string) => string])[] = [
  ['as is', (name) => name],
  ['upper case', (name) => name.toUpperCase()],
  ['trailing dot', (name) => `${name}.`],
  ['trailing space', (name) => `${name} `],
  ['zero-width space', (name) => `${name.slice(0, 2)}\u200B${name.slice(2)}`],
  ['zero-width joiner', (name) => `${name.slice(0, 1)}\u200D${name.slice(1)}`],
  ['full-width letters', (name) => name.replace(/[a-z]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0x61 + 0xff41))],
];

const HOST_LATER: readonly (readonly [string, RiskKind])[] = [
  ['.husky/pre-commit', 'git-hook-changed'],
  ['packages/web/.husky/pre-push', 'git-hook-changed'],
  ['.githooks/post-checkout', 'git-hook-changed'],
  ['tools/git-hooks/pre-commit', 'git-hook-changed'],
  ['lefthook.yml', 'git-hook-changed'],
  ['.lefthook-local.yaml', 'git-hook-changed'],
  ['.pre-commit-config.yaml', 'git-hook-changed'],
  ['.simple-git-hooks.json', 'git-hook-changed'],
  ['.lintstagedrc.json', 'git-hook-changed'],
  ['.claude/settings.json', 'agent-config-changed'],
  ['sub/.claude/commands/x.md', 'agent-config-changed'],
  ['.mcp.json', 'agent-config-changed'],
  ['.codex/config.toml', 'agent-config-changed'],
  ['.cursor/mcp.json', 'agent-config-changed'],
  ['CLAUDE.md', 'agent-config-changed'],
  ['pkg/AGENTS.md', 'agent-config-changed'],
  ['.github/copilot-instructions.md', 'agent-config-changed'],
  ['.vscode/tasks.json', 'editor-config-changed'],
  ['.vscode/settings.json', 'editor-config-changed'],
  ['.vscode/launch.json', 'editor-config-changed'],
  ['.idea/workspace.xml', 'editor-config-changed'],
  ['.devcontainer/devcontainer.json', 'editor-config-changed'],
  ['.devcontainer.json', 'editor-config-changed'],
  ['project.code-workspace', 'editor-config-changed'],
  ['.envrc', 'shell-hook-changed'],
  ['deep/dir/.envrc', 'shell-hook-changed'],
  ['.bashrc', 'shell-hook-changed'],
  ['home/.profile', 'shell-hook-changed'],
  ['.zshrc', 'shell-hook-changed'],
  ['.zshenv', 'shell-hook-changed'],
  ['mise.toml', 'shell-hook-changed'],
  ['.npmrc', 'package-manager-config-changed'],
  ['.yarnrc.yml', 'package-manager-config-changed'],
  ['.yarn/plugins/evil.cjs', 'package-manager-config-changed'],
  ['.pnpmfile.cjs', 'package-manager-config-changed'],
  ['pip.conf', 'package-manager-config-changed'],
  ['.cargo/config.toml', 'package-manager-config-changed'],
  ['bunfig.toml', 'package-manager-config-changed'],
];

const VERIFY_INTEGRITY: readonly (readonly [string, RiskKind])[] = [
  ['pytest.ini', 'verify-command-changed'],
  ['conftest.py', 'verify-command-changed'],
  ['src/pkg/conftest.py', 'verify-command-changed'],
  ['vitest.config.ts', 'verify-command-changed'],
  ['vite.config.mjs', 'verify-command-changed'],
  ['jest.config.cjs', 'verify-command-changed'],
  ['.mocharc.yml', 'verify-command-changed'],
  ['.mocharc.json', 'verify-command-changed'],
  ['babel.config.js', 'verify-command-changed'],
  ['node_modules/.bin/vitest', 'test-runner-shadowed'],
  ['packages/a/node_modules/vitest/index.js', 'test-runner-shadowed'],
  ['tools/.bin/pytest', 'test-runner-shadowed'],
  ['.venv/bin/pytest', 'test-runner-shadowed'],
  ['venv/lib/python3.12/site-packages/pytest.py', 'test-runner-shadowed'],
  ['pytest.py', 'test-runner-shadowed'],
  ['src/pytest.py', 'test-runner-shadowed'],
  ['_pytest/main.py', 'test-runner-shadowed'],
  ['unittest/__init__.py', 'test-runner-shadowed'],
  ['sitecustomize.py', 'test-runner-shadowed'],
  ['lib/usercustomize.py', 'test-runner-shadowed'],
  ['src/evil.pth', 'test-runner-shadowed'],
  ['vitest/index.js', 'test-runner-shadowed'],
  ['jest.js', 'test-runner-shadowed'],
  ['.pnp.cjs', 'test-runner-shadowed'],
];

describe('PATH_RULES: files the host runs later', () => {
  it.each(HOST_LATER)('%s → %s', (path, kind) => {
    expect(kindsOf(path)).toContain(kind);
    expect(RISK_SEVERITY[kind]).toBe('needs-approval');
  });

  it.each(HOST_LATER)('%s is caught in every spelling a host may merge with it', (path, kind) => {
    for (const [how, spell] of SPELLINGS) {
      const varied = path.split('/').map(spell).join('/');
      expect(kindsOf(varied), `${how}: ${JSON.stringify(varied)}`).toContain(kind);
    }
  });

  it('NFD and NFKC forms fold to the same name', () => {
    expect(foldSegment('.env\u0301rc'.normalize('NFD'))).toBe(foldSegment('.env\u0301rc'.normalize('NFC')));
    expect(kindsOf('\uFF0Eenvrc')).toContain('shell-hook-changed'); // FULLWIDTH FULL STOP
    expect(kindsOf('.husky\uFE0F/pre-commit')).toContain('git-hook-changed'); // variation selector
  });

  it('8.3 short names stand for the long names they can alias', () => {
    expect(kindsOf('HUSKY~1/pre-commit')).toContain('git-hook-changed');
    expect(kindsOf('VSCODE~1/tasks.json')).toContain('editor-config-changed');
    expect(kindsOf('CLAUDE~1/settings.json')).toContain('agent-config-changed');
    expect(isGitDirName('GIT~1')).toBe(true);
    expect(isGitDirName('.GIT.')).toBe(true);
    expect(isGitDirName('.g\u200Cit')).toBe(true);
    expect(isGitDirName('.git::$INDEX_ALLOCATION')).toBe(true);
    expect(isGitDirName('.gitignore')).toBe(false);
  });
});

describe('PATH_RULES: files that change what verify proves', () => {
  it.each(VERIFY_INTEGRITY)('%s → %s', (path, kind) => {
    expect(kindsOf(path)).toContain(kind);
  });

  it('approvals name the file for what it is', () => {
    expect(classifyPath('.husky/pre-commit')).toBe('git-hook');
    expect(classifyPath('.claude/settings.json')).toBe('agent-config');
    expect(classifyPath('.vscode/tasks.json')).toBe('editor-config');
    expect(classifyPath('.bashrc')).toBe('shell-hook');
    expect(classifyPath('.pnpmfile.cjs')).toBe('package-manager-config');
    expect(classifyPath('conftest.py')).toBe('test-runner-config');
    expect(classifyPath('node_modules/.bin/vitest')).toBe('runner-shadow');
    expect(classifyPath('.npmrc')).toBe('secret'); // a token file first; the risks still name it a package-manager config
    expect(kindsOf('.npmrc')).toContain('package-manager-config-changed');
  });
});

describe('PATH_RULES: ordinary files stay ordinary', () => {
  it.each([
    'src/hooks/useCounter.ts',
    'src/git/hooks.ts',
    'docs/husky.md',
    'src/claude.ts',
    'README.md',
    'src/profile.ts',
    'lib/npmrc-parser.js',
    'src/test_utils_helpers.rs',
    'vendor/lib.js',
    'src/bin/main.rs',
    'Makefile',
    'src/config.py',
    'env/README.md',
  ])('%s matches no rule', (path) => {
    expect(pathRulesFor(path)).toEqual([]);
  });
});

describe('the tables and docs/patch-risks.md agree', () => {
  const doc = readFileSync(join(import.meta.dirname, '../../../docs/patch-risks.md'), 'utf8');

  it('every rule id and every risk kind is documented', () => {
    for (const rule of [...PATH_RULES, ...CONTENT_RULES]) expect(doc, rule.id).toContain(`\`${rule.id}\``);
    for (const kind of Object.keys(RISK_SEVERITY)) expect(doc, kind).toContain(`\`${kind}\``);
  });

  it('every rule raises a kind that needs a person, and every kind has a meaning', () => {
    for (const rule of [...PATH_RULES, ...CONTENT_RULES]) expect(HUMAN_REVIEW_RISK_KINDS).toContain(rule.risk);
    for (const kind of Object.keys(RISK_SEVERITY) as RiskKind[]) expect(RISK_MEANING[kind].length).toBeGreaterThan(10);
  });
});
