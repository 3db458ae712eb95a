/**
 * Narration of a task for people (short lines, colors only on a TTY); the
 * machine formats are in headless.ts. Everything printed that came from a
 * model, worker or test run is sanitized for the terminal first.
 */
import type { Writable } from 'node:stream';
import type { Action, KernelEvent } from '@crustcore/kernel';
import type { Narrator } from '@crustcore/runtime';
import { sanitizeForTerminal } from '@crustcore/runtime';
import type { Style } from '../cli/output.js';

const short = (hash: string | null | undefined): string => (hash ? hash.slice(0, 10) : '—');
const ms = (n: number): string => (n < 1_000 ? `${n} ms` : `${(n / 1_000).toFixed(1)} s`);

export function humanNarrator(stream: Writable, style: Style, options: { readonly verbose?: boolean } = {}): Narrator {
  const line = (text: string): void => {
    stream.write(`${text}\n`);
  };
  return {
    event(event: KernelEvent, actions: readonly Action[]): void {
      switch (event.kind) {
        case 'TaskCreated':
          line(`${style.bold('●')} task ${style.cyan(event.taskId)}: ${sanitizeForTerminal(event.goal)}`);
          line(style.dim(`  profile ${event.profile}, approve ${event.approvalMode}`));
          break;
        case 'WorkspaceReady':
          line(
            `  worktree ready at base ${style.cyan(event.baseCommit.slice(0, 10))} ${style.dim('(your tree is untouched until apply)')}`,
          );
          break;
        case 'CommandCompleted': {
          const ok = event.exitCode === 0;
          const what =
            event.purpose === 'verify' ? 'verify' : event.purpose === 'baseline' ? 'baseline' : event.purpose;
          const status = event.timedOut
            ? style.red('timed out')
            : ok
              ? style.green('exit 0')
              : style.red(`exit ${event.exitCode}`);
          line(
            `  ${what}: ${sanitizeForTerminal(event.argv.join(' '))} → ${status} ${style.dim(`(${ms(event.durationMs)}, sandboxed)`)}`,
          );
          break;
        }
        case 'PatchProposed':
          line(
            `  patch ${style.cyan(short(event.patchHash))} — ${event.filesChanged} file(s); worker says done: ${event.selfClaimedDone ? 'yes' : 'no'}${
              event.risks.length ? ` ${style.yellow(`risks: ${event.risks.join(', ')}`)}` : ''
            }`,
          );
          break;
        case 'PatchRejected': {
          // A summary may end with the worker's stderr tail: indent it so it reads as quoted output.
          const [head, ...rest] = sanitizeForTerminal(event.summary).split('\n');
          line(`${style.red('✗')} not verified — ${style.bold(event.category)}: ${head ?? ''}`);
          for (const quoted of rest) line(style.dim(`    │ ${quoted}`));
          if (event.failingTests.length)
            line(`  failing: ${sanitizeForTerminal(event.failingTests.slice(0, 5).join(', '))}`);
          break;
        }
        case 'PatchVerified':
          line(
            `${style.green('✓')} verified in a fresh worktree: ${sanitizeForTerminal(event.argv.join(' '))} → exit 0 ${style.dim(`(tree ${short(event.treeHash)})`)}`,
          );
          if (event.risks.length) line(`  ${style.yellow(`risks found at verify: ${event.risks.join(', ')}`)}`);
          break;
        case 'ApprovalResolved':
          line(
            `  approval ${event.decision === 'granted' ? style.green('granted') : style.red('denied')} by ${event.by}`,
          );
          break;
        case 'PatchApplied':
          line(`${style.green('✓')} applied atomically ${style.dim(`(${event.journalId})`)}`);
          break;
        case 'IntegrationFailed':
          line(`${style.red('✗')} not applied — ${event.reason}: ${sanitizeForTerminal(event.detail)}`);
          break;
        default:
          break;
      }
      for (const action of actions) {
        switch (action.kind) {
          case 'StartAttempt':
            line(
              `${style.bold('→')} attempt ${action.attempt}${action.diagnosis ? style.dim(' (with the diagnosis of the last failure)') : ''}`,
            );
            break;
          case 'RequestApproval':
            line(
              `  approval needed: ${action.description}${action.risks.length ? style.yellow(` (risks: ${action.risks.join(', ')})`) : ''}${action.requiresHuman ? style.yellow(' — a person must answer') : ''}`,
            );
            break;
          case 'BudgetExhausted':
            line(`${style.red('!')} budget ${action.budget} exhausted (${action.used} > ${action.limit})`);
            break;
          case 'TaskFinished':
            line(
              `${style.bold('●')} ${action.outcome === 'completed' ? style.green('completed') : style.red(action.outcome)}: ${sanitizeForTerminal(action.reason)}`,
            );
            break;
          case 'Rejected':
            if (options.verbose) line(style.red(`  kernel rejected ${action.eventKind}: ${action.reason}`));
            break;
          default:
            break;
        }
      }
    },
    note(kind: string, detail: Record<string, unknown>): void {
      if (options.verbose) line(style.dim(`  ${kind} ${sanitizeForTerminal(JSON.stringify(detail))}`));
    },
  };
}

export const silentNarrator: Narrator = { event() {}, note() {} };
