/**
 * THE table of paths that make a patch more than code: files the host runs
 * later on its own (hooks, agent and editor configs, shell and install hooks)
 * and files that change what the verify command proves (runner configs,
 * runner stand-ins). Each row names the risk it raises, so the approval says
 * what the file IS. Names are compared folded (path-fold.ts): `.HUSKY`,
 * `.husky.` and `.hus\u200Bky` are all husky. Rules that need file content
 * (package.json keys, pyproject sections, embedded repositories) are listed
 * in `CONTENT_RULES` and implemented in content-risks.ts; both tables are
 * documented row by row in docs/patch-risks.md (a test checks every id is).
 *
 * Decisions: a Makefile (justfile, Taskfile, noxfile, tox.ini…) runs only
 * when a person types its command, like any source file, so it is build
 * config — unless the verify argv runs it, then it is `verify-command-changed`
 * (verify-argv-risks.ts). CLAUDE.md / AGENTS.md-style instruction files are
 * agent configuration: an agent with the user's tools reads them as orders.
 */
import { foldPath, shortNamePrefix } from './path-fold.js';
import type { RiskKind } from './risk.js';

export type PathRiskKind = Extract<
  RiskKind,
  | 'git-hook-changed'
  | 'embedded-git-repository'
  | 'agent-config-changed'
  | 'editor-config-changed'
  | 'shell-hook-changed'
  | 'package-manager-config-changed'
  | 'verify-command-changed'
  | 'test-runner-shadowed'
>;

export interface PathRule {
  readonly id: string;
  readonly risk: PathRiskKind;
  /** Why the host or the verdict cares, one line (shown in docs/patch-risks.md). */
  readonly what: string;
  readonly matches: (segments: readonly string[]) => boolean;
}

type Match = (segments: readonly string[]) => boolean;

const last = (segments: readonly string[]): string => segments[segments.length - 1] ?? '';
/** The file's own name is one of `names` (any depth). */
const named =
  (...names: string[]): Match =>
  (s) =>
    names.includes(last(s));
/** The file's own name matches `pattern` (any depth). */
const nameLike =
  (pattern: RegExp): Match =>
  (s) =>
    pattern.test(last(s));
/** Some directory on the path (not the file itself) is one of `names`. */
const underDir =
  (...names: string[]): Match =>
  (s) =>
    s.slice(0, -1).some((part) => names.includes(part));
/** `dir/child/…` anywhere on the path. */
const underPair =
  (dir: string, child: string): Match =>
  (s) =>
    s.some((part, i) => part === dir && s[i + 1] === child && i + 1 < s.length - 1);
/** A top-level file or directory named one of `names`. */
const topLevel =
  (...names: string[]): Match =>
  (s) =>
    names.includes(s[0] ?? '');
/** A short name (`HUSKY~1`) that could stand for any of `names` (dots dropped). */
const shortFor =
  (...names: string[]): Match =>
  (s) =>
    s.some((part) => {
      const prefix = shortNamePrefix(part);
      return prefix !== null && names.some((name) => name.replace(/^\./, '').replace(/\./g, '').startsWith(prefix));
    });
const anyOf =
  (...matches: Match[]): Match =>
  (s) =>
    matches.some((m) => m(s));

const RUNNER_MODULES = ['pytest', '_pytest', 'pluggy', 'unittest', 'py', 'iniconfig', 'nose', 'nose2', 'doctest'];
const NODE_RUNNERS = ['vitest', 'jest', 'mocha', 'ava', 'tap', 'jasmine', 'uvu', 'playwright', 'tsx', 'ts-node'];

export const PATH_RULES: readonly PathRule[] = [
  // --- the host runs these on commit, checkout, merge or push
  {
    id: 'hook-directory',
    risk: 'git-hook-changed',
    what: 'a git hooks directory (`.githooks/`, `.git-hooks/`, `.hooks/`, `git-hooks/`, `githooks/`) a repo points core.hooksPath at',
    matches: anyOf(
      underDir('.githooks', '.git-hooks', '.hooks', 'githooks', 'git-hooks'),
      shortFor('.githooks', '.git-hooks'),
    ),
  },
  {
    id: 'husky',
    risk: 'git-hook-changed',
    what: 'husky hooks (`.husky/`, `.huskyrc*`): husky sets core.hooksPath to them on install',
    matches: anyOf(underDir('.husky'), nameLike(/^\.huskyrc(?:\..+)?$/), shortFor('.husky')),
  },
  {
    id: 'lefthook',
    risk: 'git-hook-changed',
    what: 'lefthook configuration (`lefthook.yml`, `.lefthook.yml`, `lefthook-local.*`, `.lefthook/`)',
    matches: anyOf(
      nameLike(/^\.?lefthook(?:-local)?\.(?:ya?ml|json|toml)$/),
      underDir('.lefthook', '.lefthook-local'),
      shortFor('.lefthook'),
    ),
  },
  {
    id: 'pre-commit-framework',
    risk: 'git-hook-changed',
    what: 'pre-commit / overcommit / lint-staged configuration: commands git hooks run',
    matches: anyOf(
      named('.pre-commit-config.yaml', '.pre-commit-config.yml', '.pre-commit-hooks.yaml', '.overcommit.yml'),
      nameLike(/^(?:\.lintstagedrc(?:\..+)?|lint-staged\.config\.[cm]?[jt]s)$/),
    ),
  },
  {
    id: 'simple-git-hooks-file',
    risk: 'git-hook-changed',
    what: 'simple-git-hooks configuration files (`.simple-git-hooks.*`, `simple-git-hooks.*`)',
    matches: nameLike(/^\.?simple-git-hooks\.(?:c?js|json|mjs)$/),
  },
  {
    id: 'git-pointer-file',
    risk: 'embedded-git-repository',
    what: 'a `.git` file or directory in any spelling (`.GIT`, `.git.`, `GIT~1`): a nested repository or gitdir pointer',
    // Extraction refuses these outright (patch.ts); listed so staging and docs share the rule.
    matches: (s) => s.some((part) => part === '.git' || part.startsWith('.git:') || shortNamePrefix(part) === 'git'),
  },
  // --- coding agents and editors run these when they start in the folder
  {
    id: 'agent-config',
    risk: 'agent-config-changed',
    what: 'agent settings, hooks, MCP servers and commands (`.claude/`, `.mcp.json`, `.codex/`, `.cursor/`, `.gemini/`, `.windsurf/`, `.continue/`, `.roo/`, `.aider*`, `opencode.json`…)',
    matches: anyOf(
      underDir('.claude', '.codex', '.cursor', '.gemini', '.windsurf', '.continue', '.roo', '.opencode', '.amazonq'),
      underDir('.junie', '.kiro', '.aider', '.goose', '.zed', '.clinerules', '.augment'),
      named('.mcp.json', 'mcp.json', 'opencode.json', 'opencode.jsonc', '.clinerules', '.roomodes'),
      nameLike(/^\.aider.*$/),
      underPair('.vscode', 'mcp.json'),
      shortFor('.claude', '.codex', '.cursor', '.gemini'),
    ),
  },
  {
    id: 'agent-instructions',
    risk: 'agent-config-changed',
    what: 'instructions an agent obeys at startup (`CLAUDE.md`, `AGENTS.md`, `GEMINI.md`, `.cursorrules`, `.windsurfrules`, copilot instructions)',
    matches: anyOf(
      named('claude.md', 'claude.local.md', 'agents.md', 'agent.md', 'gemini.md', '.cursorrules', '.windsurfrules'),
      named('copilot-instructions.md'),
      underPair('.github', 'instructions'),
      underPair('.github', 'prompts'),
    ),
  },
  {
    id: 'editor-config',
    risk: 'editor-config-changed',
    what: 'editor workspace config that runs tasks or picks interpreters (`.vscode/`, `.idea/`, `*.code-workspace`, `.fleet/`, `.zed/`, vim `.exrc`/`.nvim.lua`, emacs `.dir-locals.el`)',
    matches: anyOf(
      underDir('.vscode', '.idea', '.fleet', '.theia', '.vs'),
      nameLike(/\.(?:code-workspace|sublime-project)$/),
      named('.exrc', '.vimrc', '.nvimrc', '.nvim.lua', '.lvimrc', '.dir-locals.el', '.dir-locals-2.el'),
      shortFor('.vscode', '.idea'),
    ),
  },
  {
    id: 'dev-container',
    risk: 'editor-config-changed',
    what: 'dev-container and cloud-workspace definitions (`.devcontainer/`, `.devcontainer.json`, `.gitpod.yml`): lifecycle commands',
    matches: anyOf(
      underDir('.devcontainer'),
      named('.devcontainer.json', '.gitpod.yml', '.gitpod.dockerfile', 'devbox.json', '.replit'),
      shortFor('.devcontainer'),
    ),
  },
  // --- shells run these when they start or enter the directory
  {
    id: 'shell-rc',
    risk: 'shell-hook-changed',
    what: 'shell start-up files (`.bashrc`, `.bash_profile`, `.profile`, `.zshrc`, `.zshenv`, `.zprofile`, `.kshrc`, `.cshrc`, fish `config.fish`…)',
    matches: anyOf(
      nameLike(
        /^\.(?:bash(?:rc|_profile|_login|_logout|_aliases)|profile|zsh(?:rc|env|_profile)|zprofile|zlog(?:in|out))$/,
      ),
      nameLike(/^\.(?:kshrc|mkshrc|cshrc|tcshrc|login|logout|xprofile|xsession|xinitrc)$/),
      underPair('.config', 'fish'),
      named('config.fish'),
    ),
  },
  {
    id: 'directory-env-hook',
    risk: 'shell-hook-changed',
    what: 'per-directory environment hooks (direnv `.envrc`, autoenv `.env.leave`/`.autoenv*`, `.mise.toml`/`mise.toml`, `.rtx.toml`)',
    matches: anyOf(
      named('.envrc', '.env.leave', '.autoenv', '.autoenv.zsh', '.autoenv_leave.zsh'),
      nameLike(/^\.?(?:mise|rtx)(?:\.[\w-]+)?\.toml$/),
      underDir('.mise'),
      underPair('.config', 'mise'),
    ),
  },
  // --- package managers run these on install
  {
    id: 'package-manager-config',
    risk: 'package-manager-config-changed',
    what: 'package-manager config that runs or redirects code (`.npmrc`, `.yarnrc*`, `.yarn/plugins/`, `.yarn/releases/`, `.pnpmfile.*`, `bunfig.toml`, `pip.conf`, `.pypirc`, `uv.toml`, `.cargo/config*`, `.condarc`)',
    matches: anyOf(
      named('.npmrc', '.yarnrc', '.yarnrc.yml', '.yarnrc.yaml', 'bunfig.toml', '.bunfig.toml', 'pip.conf', 'pip.ini'),
      named('.pypirc', 'uv.toml', '.condarc', 'poetry.toml', '.gemrc', 'pnpm-workspace.yaml', '.pnpmfile.mjs'),
      nameLike(/^\.?pnpmfile\.[cm]?js$/),
      underPair('.yarn', 'plugins'),
      underPair('.yarn', 'releases'),
      underPair('.cargo', 'config.toml'),
      (s) => s.some((part, i) => part === '.cargo' && (s[i + 1] === 'config' || s[i + 1] === 'config.toml')),
      underPair('.bundle', 'config'),
      underPair('.pip', 'pip.conf'),
    ),
  },
  // --- these change what the verify command runs or which tests it finds
  {
    id: 'python-runner-config',
    risk: 'verify-command-changed',
    what: 'pytest configuration that can skip, deselect or replace tests (`pytest.ini`, `.pytest.ini`, `conftest.py` at any depth)',
    matches: named('pytest.ini', '.pytest.ini', 'conftest.py'),
  },
  {
    id: 'js-runner-config',
    risk: 'verify-command-changed',
    what: 'JS test-runner and transform config (`vitest.*`, `vite.config.*`, `jest.config.*`, `.mocharc*`, `ava.config.*`, babel config, `.swcrc`, `.c8rc`, `.nycrc`)',
    matches: anyOf(
      nameLike(/^(?:vitest|vite|jest|ava|karma|playwright|cypress|wdio|babel)\.(?:config|workspace|setup)\.[\w.]+$/),
      nameLike(/^vitest\.(?:workspace|projects)\.[\w.]+$/),
      nameLike(/^jest\.(?:preset|setup)\.[\w.]+$/),
      nameLike(/^\.(?:mocharc|babelrc|swcrc|c8rc|nycrc|taprc)(?:\.[\w.]+)?$/),
      named('.jestrc', 'jest.json', '.jasmine.json', 'jasmine.json'),
      underPair('spec', 'support'),
    ),
  },
  // --- stand-ins for the runner or its modules on the resolution path
  {
    id: 'dependency-directory',
    risk: 'test-runner-shadowed',
    what: 'installed-dependency and executable directories (`node_modules/`, `.bin/`, `.venv/`, `venv/`, `site-packages/`, `__pypackages__/`, `vendor/bin/`, yarn PnP `.pnp.*`)',
    matches: anyOf(
      underDir('node_modules', '.bin', '.venv', 'site-packages', 'dist-packages', '__pypackages__', '.tox', '.nox'),
      (s) => s.length > 2 && (s[0] === 'venv' || s[0] === 'env') && ['bin', 'lib', 'scripts'].includes(s[1] ?? ''),
      underPair('vendor', 'bin'),
      nameLike(/^\.pnp\.(?:c?js|loader\.mjs|data\.json)$/),
      shortFor('node_modules'),
    ),
  },
  {
    id: 'python-startup-hook',
    risk: 'test-runner-shadowed',
    what: 'files Python imports at start-up (`sitecustomize.py`, `usercustomize.py`, `*.pth`) — run before any test',
    matches: anyOf(named('sitecustomize.py', 'usercustomize.py'), nameLike(/\.pth$/)),
  },
  {
    id: 'runner-named-module',
    risk: 'test-runner-shadowed',
    what: `modules named like a test runner (\`${RUNNER_MODULES.join('`, `')}\` as \`.py\` or package at any depth; \`${NODE_RUNNERS.join('`, `')}\` at the top level)`,
    matches: anyOf(
      nameLike(new RegExp(`^(?:${RUNNER_MODULES.join('|')})\\.py[cdw]?$`)),
      underDir(...RUNNER_MODULES),
      topLevel(...NODE_RUNNERS),
      nameLike(new RegExp(`^(?:${NODE_RUNNERS.join('|')})\\.[cm]?[jt]s$`)),
    ),
  },
];

export interface ContentRule {
  readonly id: string;
  readonly risk: RiskKind;
  readonly what: string;
}

/** Rules that read file content (content-risks.ts, symlink-chain.ts, verify-argv-risks.ts implement them). */
export const CONTENT_RULES: readonly ContentRule[] = [
  {
    id: 'hooks-path-value',
    risk: 'git-hook-changed',
    what: "files under the directory the repository's own `core.hooksPath` names",
  },
  {
    id: 'package-json-hooks',
    risk: 'git-hook-changed',
    what: 'package.json keys hook managers read (`simple-git-hooks`, `husky`, `lint-staged`, `pre-commit`, `ghooks`, `config.ghooks`)',
  },
  {
    id: 'package-json-install-scripts',
    risk: 'package-manager-config-changed',
    what: 'package.json lifecycle scripts the package manager runs on install (`preinstall`, `install`, `postinstall`, `prepare`, `prepack`, `postpack`, `prepublish`, …)',
  },
  {
    id: 'package-json-test-scripts',
    risk: 'verify-command-changed',
    what: 'package.json `test`/`pretest`/`posttest`, the script the verify argv names, every script those call, and the `jest`/`mocha`/`ava`/`vitest`/`c8`/`nyc` keys',
  },
  {
    id: 'python-config-sections',
    risk: 'verify-command-changed',
    what: 'pytest sections of `pyproject.toml` (`[tool.pytest*]`), `setup.cfg` (`[tool:pytest]`), `tox.ini` (`[pytest]`, `[tox*]`, `[testenv*]`)',
  },
  {
    id: 'embedded-repository-content',
    risk: 'embedded-git-repository',
    what: 'a directory holding `HEAD` with `objects/`, `refs/` or `config` (a repository under any name), or a file whose text starts with `gitdir:`',
  },
  {
    id: 'symlink-chain',
    risk: 'symlink-outside',
    what: 'a symlink whose chain, resolved in the resulting tree (links through links, `..` after a link, absolute targets), leaves the tree',
  },
  {
    id: 'runner-discovered-tests',
    risk: 'tests-weakened',
    what: "an existing file the runners' own discovery rules call a test (node --test, pytest + `python_files`, jest, vitest, mocha `spec`, go) edited, renamed or deleted",
  },
  {
    id: 'verify-program-files',
    risk: 'verify-command-changed',
    what: 'files the verify argv names or its program reads first (`node x.js`, `./test.sh`, `make` → Makefile, `tox` → tox.ini, `tsc` → tsconfig, `go` → go.mod, `cargo` → Cargo.toml…)',
  },
];

/** Every path rule that `path` matches, compared on folded names. */
export function pathRulesFor(path: string): PathRule[] {
  const segments = foldPath(path);
  return PATH_RULES.filter((rule) => rule.matches(segments));
}
