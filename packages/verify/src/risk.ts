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
  | 'symlink-outside';

export type RiskSeverity = 'info' | 'warn' | 'needs-approval';

export interface Risk {
  readonly kind: RiskKind;
  readonly severity: RiskSeverity;
  /** One line, fixed text per kind plus counts. */
  readonly detail: string;
  /** Paths involved (at most 50). */
  readonly paths: readonly string[];
}

export const needsApproval = (risks: readonly Risk[]): boolean =>
  risks.some((risk) => risk.severity === 'needs-approval');
