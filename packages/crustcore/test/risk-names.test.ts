/**
 * The verifier names the risks of a patch; the kernel decides which of them
 * need a person. They are separate packages (the kernel imports nothing), so
 * this test pins the two together: a risk the verifier marks "needs approval"
 * under a name the kernel does not know would be approved by `--approve auto`.
 */
import { DEFAULT_KERNEL_CONFIG } from '@crustcore/kernel';
import { HUMAN_REVIEW_RISK_KINDS, RISK_SEVERITY } from '@crustcore/verify';
import { describe, expect, it } from 'vitest';

describe('risk names shared by the verifier and the kernel', () => {
  it('every risk kind that needs a person is one the kernel sends to a person', () => {
    expect(HUMAN_REVIEW_RISK_KINDS.length).toBeGreaterThan(0);
    for (const kind of HUMAN_REVIEW_RISK_KINDS) expect(DEFAULT_KERNEL_CONFIG.humanReviewRisks).toContain(kind);
  });

  it('the kernel names no risk the verifier never emits', () => {
    for (const name of DEFAULT_KERNEL_CONFIG.humanReviewRisks) expect(Object.keys(RISK_SEVERITY)).toContain(name);
  });

  it('warn and info risks do not by themselves need a person', () => {
    const quiet = Object.entries(RISK_SEVERITY).filter(([, severity]) => severity !== 'needs-approval');
    expect(quiet.length).toBeGreaterThan(0);
    for (const [kind] of quiet) expect(DEFAULT_KERNEL_CONFIG.humanReviewRisks).not.toContain(kind);
  });
});
