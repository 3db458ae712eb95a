/**
 * The verify tool's answer, from what the kernel and the VerifySession said:
 * passed (the kernel now waits for a person) or failed (back to IMPLEMENT
 * for another attempt, or ABORTED when the kernel's revisit budget is spent),
 * with the diagnosis and the tail of the test output.
 */
import { readFileSync } from 'node:fs';
import { type Json, ok } from '@crustcore/kernel';
import type { CommandRecord } from '@crustcore/runtime';
import type { Repository } from '@crustcore/verify';
import { MCP_LIMITS } from './limits.js';
import type { LiveTask } from './task-driver.js';
import { fail, type TaskHost, type ToolResult } from './task-host.js';

/** The verify run's output tail, read back from the ledger's artifact store (stored redacted). */
function outputTail(service: TaskHost, repo: Repository, commands: readonly CommandRecord[]): string {
  const run = commands.find((c) => c.purpose === 'verify');
  if (run === undefined) return '';
  const read = (hash: string | undefined): string => {
    if (hash === undefined) return '';
    try {
      return readFileSync(service.ledgers.artifactPath(repo, hash), 'utf8');
    } catch {
      return '';
    }
  };
  return `${read(run.stdoutArtifact)}\n${read(run.stderrArtifact)}`.slice(-MCP_LIMITS.maxLogTailChars);
}

function failedAnswer(service: TaskHost, live: LiveTask, repo: Repository): Json {
  const last = live.lastVerify;
  const d = live.session.lastDiagnosis;
  const outcome = last?.outcome;
  const summary = outcome === undefined || outcome.kind === 'passed' ? '' : outcome.summary;
  const category = outcome === undefined || outcome.kind === 'passed' ? 'unknown' : outcome.category;
  const aborted = live.finished !== null;
  return {
    task_id: live.taskId,
    passed: false,
    phase: live.phase,
    staged_hash: last?.stagedHash ?? null,
    diagnosis:
      d === null || outcome?.kind !== 'failed'
        ? { kind: category, summary, remediation: null, failing_tests: [], expected: null, received: null }
        : {
            kind: d.kind,
            summary: d.summary,
            remediation: d.remediation,
            failing_tests: [...d.failingTests],
            expected: d.expected,
            received: d.received,
          },
    exit_code: d?.exitCode ?? null,
    timed_out: d?.timedOut ?? false,
    output_tail: outcome?.kind === 'failed' ? outputTail(service, repo, outcome.commands) : '',
    next: aborted
      ? `the kernel ended the task (${live.finished?.reason ?? 'failed'}); create a new task`
      : 'stage a corrected diff, then verify',
  };
}

export function verifyAnswer(service: TaskHost, live: LiveTask, repo: Repository): ToolResult {
  const last = live.lastVerify;
  const verified = live.session.verified;
  if (last?.outcome.kind !== 'passed' || verified === null) return ok(failedAnswer(service, live, repo));
  if (live.approval === null) {
    // The kernel did not ask for approval: it refused integration (policy) and ended the task.
    return fail('refused', `verified, but the kernel ended the task: ${live.finished?.reason ?? 'no approval asked'}`);
  }
  return ok({
    task_id: live.taskId,
    passed: true,
    phase: live.phase,
    staged_hash: last.stagedHash,
    patch_sha256: verified.patchSha256,
    verification_run: last.runId === null ? null : last.runId.toString(),
    command: [...last.outcome.argv],
    tests_run: last.outcome.testsRun,
    risks: [...last.outcome.risks],
    next: `ask a person to review and run "crustcore mcp-token ${live.taskId}", then call approve with the token they give you`,
  });
}
