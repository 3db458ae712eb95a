/**
 * `crustcore inspect --database-url URL | --state-dir DIR`: the ledger is the
 * audit truth, the state plane the coordination truth; this checks that the
 * state plane's mirror of the ledger agrees with the file. Loaded only when
 * asked for (full build only), so plain `inspect` never opens a database.
 */
import { ledgerIdFor, ledgerSummaries, openState, StateOpenError } from '@crustcore/daemon';
import type { CrossCheckReport } from '@crustcore/state';
import { UsageError } from '../cli/command.js';

export interface MirrorCheck {
  readonly ledgerId: string;
  readonly report: CrossCheckReport;
  /** One line for people (see describeMirror). */
  readonly summary: string;
}

export async function checkLedgerMirror(options: {
  readonly logPath: string;
  readonly databaseUrl: string | undefined;
  readonly stateDir: string;
}): Promise<MirrorCheck> {
  let opened: Awaited<ReturnType<typeof openState>>;
  try {
    opened = await openState({ databaseUrl: options.databaseUrl, stateDir: options.stateDir });
  } catch (error) {
    // A locked or unreachable database is something the user can fix: say what, exit 2.
    if (error instanceof StateOpenError) throw new UsageError(error.message);
    throw error;
  }
  const { state, db } = opened;
  try {
    const ledgerId = ledgerIdFor(options.logPath);
    const report = await state.crossCheckLedgerMirror(db, ledgerSummaries(options.logPath), { ledgerId });
    return { ledgerId, report, summary: describeMirror(ledgerId, report) };
  } finally {
    await db.close();
  }
}

/** One line for people: agreement, lag, or the first disagreements. */
export function describeMirror(ledgerId: string, report: CrossCheckReport): string {
  const check = { ledgerId };
  if (report.mirrorHead === 0 && report.consistent)
    return `nothing mirrored yet for ledger ${check.ledgerId} (a daemon mirrors a project's ledger after each task)`;
  const lag = report.behind > 0 ? `; ${report.behind} newer frame(s) not mirrored yet` : '';
  if (report.consistent) return `agrees with the log: frames 1..${report.mirrorHead} of ledger ${check.ledgerId}${lag}`;
  const first = report.mismatches
    .slice(0, 5)
    .map((m) => `${m._tag} at seq ${m.seq}${m._tag === 'FieldMismatch' ? ` (${m.field})` : ''}`)
    .join(', ');
  return `DISAGREES with the log (ledger ${check.ledgerId}): ${first}${report.mismatches.length > 5 || report.truncated ? ', …' : ''}`;
}
