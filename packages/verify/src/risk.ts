/**
 * Risks a patch carries. They never block verification; the lead's policy
 * reads them (a `needs-approval` risk requires approval even under
 * `--approve auto`).
 */

export type RiskKind =
  | 'tests-weakened'
  | 'ci-workflow-changed'
  | 'secret-like-file'
  | 'lockfile-changed'
  | 'config-changed'
  | 'executable-bit'
  | 'binary-file'
  | 'symlink-outside'
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
  // New or changed third-party code runs in the tests and later on the user's machine.
  'dependencies-changed': 'needs-approval',
  'lockfile-changed': 'warn',
  'config-changed': 'warn',
  'executable-bit': 'warn',
  'binary-file': 'info',
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
