/**
 * Risks a patch carries. They never block verification; the lead's policy
 * reads them (a `needs-approval` risk requires approval even under
 * `--approve auto`). docs/patch-risks.md lists every kind with the rules
 * that raise it (`PATH_RULES`, `CONTENT_RULES` in patch-kinds.ts).
 */

export type RiskKind =
  | 'tests-weakened'
  | 'ci-workflow-changed'
  | 'secret-like-file'
  | 'symlink-outside'
  | 'git-hook-changed'
  | 'embedded-git-repository'
  | 'agent-config-changed'
  | 'editor-config-changed'
  | 'shell-hook-changed'
  | 'package-manager-config-changed'
  | 'verify-command-changed'
  | 'test-runner-shadowed'
  | 'lockfile-changed'
  | 'config-changed'
  | 'executable-bit'
  | 'binary-file'
  | 'hidden-content'
  | 'dependencies-changed';

export type RiskSeverity = 'info' | 'warn' | 'needs-approval';

export interface Risk {
  readonly kind: RiskKind;
  readonly severity: RiskSeverity;
  /** One line, fixed text per kind plus counts. */
  readonly detail: string;
  /** Paths involved (at most 50). */
  readonly paths: readonly string[];
}

/** How serious each kind is: one table, so no emitter can disagree with another. */
export const RISK_SEVERITY: Readonly<Record<RiskKind, RiskSeverity>> = {
  'tests-weakened': 'needs-approval',
  'ci-workflow-changed': 'needs-approval',
  'secret-like-file': 'needs-approval',
  'symlink-outside': 'needs-approval',
  // The host runs these later, outside any sandbox: on commit, on cd, on opening the editor or agent, on install.
  'git-hook-changed': 'needs-approval',
  'embedded-git-repository': 'needs-approval',
  'agent-config-changed': 'needs-approval',
  'editor-config-changed': 'needs-approval',
  'shell-hook-changed': 'needs-approval',
  'package-manager-config-changed': 'needs-approval',
  // These change what "the tests passed" means, so the verdict alone proves nothing.
  'verify-command-changed': 'needs-approval',
  'test-runner-shadowed': 'needs-approval',
  'hidden-content': 'needs-approval',
  // New or changed third-party code runs in the tests and later on the user's machine.
  'dependencies-changed': 'needs-approval',
  'lockfile-changed': 'warn',
  'config-changed': 'warn',
  'executable-bit': 'warn',
  'binary-file': 'info',
};

/** What each kind means, in the words an approval prompt and docs/patch-risks.md use. */
export const RISK_MEANING: Readonly<Record<RiskKind, string>> = {
  'tests-weakened': 'edits, deletes, skips or runs fewer of the tests the runner discovers',
  'ci-workflow-changed': 'changes CI configuration (runs with CI secrets after a push)',
  'secret-like-file': 'touches a file that usually holds credentials',
  'symlink-outside': 'leaves a symlink whose resolved chain points outside the tree',
  'git-hook-changed': 'changes git hooks or a hook manager: git runs them on the host on commit, checkout or push',
  'embedded-git-repository': 'adds a git repository (bare or not) or a gitdir pointer inside the tree',
  'agent-config-changed': 'changes coding-agent configuration or instructions that run commands or grant tools',
  'editor-config-changed': 'changes editor or dev-container configuration that runs commands when a folder opens',
  'shell-hook-changed': 'changes a shell rc or environment hook that runs when a shell starts or enters the directory',
  'package-manager-config-changed': 'changes package-manager configuration or install scripts that run on install',
  'verify-command-changed': 'changes what the verify command runs (test scripts, runner configuration)',
  'test-runner-shadowed': 'adds files that stand in for the test runner or its modules on the resolution path',
  'lockfile-changed': 'changes dependency lockfiles',
  'config-changed': 'changes build, test or tool configuration',
  'executable-bit': 'changes the executable bit',
  'binary-file': 'adds or changes binary files',
  'dependencies-changed': 'adds or changes third-party dependencies (they run in the tests and on your machine)',
  'hidden-content':
    'has characters, bytes or binary content a terminal would not show as they are (docs/patch-view.md)',
};

/**
 * Risk kinds that always need a person, whatever `--approve` says. The
 * kernel's `humanReviewRisks` must name each of them (a test pins the two
 * lists together: a name the kernel does not know would be auto-approved).
 */
export const HUMAN_REVIEW_RISK_KINDS: readonly RiskKind[] = (Object.keys(RISK_SEVERITY) as RiskKind[]).filter(
  (kind) => RISK_SEVERITY[kind] === 'needs-approval',
);

export const needsApproval = (risks: readonly Risk[]): boolean =>
  risks.some((risk) => risk.severity === 'needs-approval');

/** A risk of `kind` with its table severity; null when no path is involved and none is required. */
export function riskOf(kind: RiskKind, detail: string, paths: readonly string[]): Risk {
  return { kind, severity: RISK_SEVERITY[kind], detail, paths: [...new Set(paths)].slice(0, 50) };
}

/** Merges risks of the same kind (details joined, paths unioned), keeping first-seen order. */
export function mergeRisks(risks: readonly Risk[]): Risk[] {
  const byKind = new Map<RiskKind, Risk>();
  for (const risk of risks) {
    const seen = byKind.get(risk.kind);
    if (seen === undefined) {
      byKind.set(risk.kind, risk);
      continue;
    }
    const detail = seen.detail.includes(risk.detail) ? seen.detail : `${seen.detail}; ${risk.detail}`;
    byKind.set(risk.kind, riskOf(risk.kind, detail.slice(0, 1000), [...seen.paths, ...risk.paths]));
  }
  return [...byKind.values()];
}
