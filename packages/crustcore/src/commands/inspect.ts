/**
 * `crustcore inspect`: checks a ledger (hash chain, head file, receipts,
 * artifacts; with --replay, the kernel's decisions) and tells each task's
 * story. Exit 0 when intact; otherwise the reason's own code (INSPECT_EXIT),
 * naming the first bad seq and the reason on stderr. A torn tail left by a crash is reported, not failed.
 */

import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { daemonStateDir } from '@crustcore/daemon';
import {
  defaultHeadPath,
  describeReceiptKeyError,
  type InspectReport,
  inspectLog,
  kernelReplay,
  loadReceiptKey,
  type ReceiptKey,
  receiptKeyPath,
  renderStory,
  stateDirLayout,
} from '@crustcore/ledger';
import { type Command, UsageError } from '../cli/command.js';
import { ExitCode, INSPECT_EXIT, INSPECT_MIRROR_MISMATCH } from '../cli/exit-codes.js';
import { type Io, writeLine } from '../cli/output.js';
import { crustcoreHome, currentProjectDir } from '../cli/paths.js';
import type { MirrorCheck } from './inspect-mirror.js';
import { inspectSpec } from './specs.js';

/** Default state directory when neither --dir nor --log is given. */
export const DEFAULT_STATE_DIR = '.crustcore-state';

export interface LedgerPaths {
  readonly logPath: string;
  readonly headPath: string;
  readonly artifactsDir: string;
}

/** `--dir DIR` (a state dir) or `--log FILE` (its head and artifacts are looked for next to it). */
export function ledgerPaths(values: { dir?: string | undefined; log?: string | undefined }, io: Io): LedgerPaths {
  if (values.dir !== undefined && values.log !== undefined) throw new UsageError('give --dir or --log, not both');
  if (values.log !== undefined) {
    const logPath = resolve(io.cwd, values.log);
    return { logPath, headPath: defaultHeadPath(logPath), artifactsDir: stateDirLayout(dirname(logPath)).artifactsDir };
  }
  return stateDirLayout(resolve(io.cwd, values.dir ?? DEFAULT_STATE_DIR));
}

/** Without --dir or --log: the current repository's project directory, when there is one. */
export async function withDefaultDir<T extends { dir?: string | undefined; log?: string | undefined }>(
  values: T,
  io: Io,
): Promise<T> {
  if (values.dir !== undefined || values.log !== undefined) return values;
  const project = await currentProjectDir(io);
  return project === undefined ? values : { ...values, dir: project };
}

type KeyLookup = { readonly key: ReceiptKey | undefined; readonly error?: string; readonly path: string };

function findKey(explicit: string | undefined, io: Io): KeyLookup {
  const path = explicit === undefined ? receiptKeyPath(io.env) : resolve(io.cwd, explicit);
  const loaded = loadReceiptKey(path);
  if (loaded._tag === 'Right') return { key: loaded.right, path };
  // No key at the default place is not an error by itself: only logs with receipts need one.
  if (loaded.left._tag === 'KeyFileMissing' && explicit === undefined) return { key: undefined, path };
  return { key: undefined, error: describeReceiptKeyError(loaded.left), path };
}

function describeHead(report: InspectReport): string {
  const { chain } = report;
  switch (chain.head._tag) {
    case 'Absent':
      return 'no head file';
    case 'Malformed':
      return `head file unreadable (${chain.head.reason})`;
    case 'Present': {
      const mac = chain.headChecked === 'mac' ? 'MAC checked' : 'MAC not checked (no key)';
      const lag =
        chain.framesPastHead > 0 ? `; ${chain.framesPastHead} frame(s) past it (a crash before the head update)` : '';
      return `head at seq ${chain.head.head.seq} (${mac})${lag}`;
    }
  }
}

/** Kernel snapshots, and loudly each one `open` will not trust (it replays past those instead). */
function printSnapshots(io: Io, report: InspectReport): void {
  const { total, untrusted } = report.snapshots;
  if (total === 0) return;
  writeLine(io.stdout, `${io.out.bold('snapshots:')} ${total} kernel snapshot(s), ${untrusted.length} not trusted`);
  for (const bad of untrusted) {
    writeLine(
      io.stdout,
      `${io.out.yellow('untrusted snapshot:')} seq ${bad.seq}: ${bad.reason} — opening never starts from it ` +
        '(it replays the frames instead); run "crustcore inspect --replay" to compare it with the replayed state',
    );
  }
}

function printHuman(io: Io, logPath: string, report: InspectReport): void {
  const s = io.out;
  const { chain } = report;
  writeLine(io.stdout, `${s.bold('log:')} ${logPath} (${chain.frames} frames, ${chain.goodEnd} bytes)`);
  writeLine(io.stdout, `${s.bold('chain:')} seq 1..${chain.lastSeq} linked; ${describeHead(report)}`);
  if (chain.tornTail !== undefined) {
    writeLine(
      io.stdout,
      `${s.yellow('torn tail:')} ${chain.tornTail.bytes} bytes after seq ${chain.tornTail.afterSeq} (a crash mid-write, not tampering; ` +
        'the next writer truncates it under a ledger.recovered frame)',
    );
  }
  writeLine(
    io.stdout,
    `${s.bold('checked:')} ${report.receiptsChecked} receipts, ${report.artifactsChecked} artifacts, ${report.kernelEventsChecked} kernel events`,
  );
  printSnapshots(io, report);
  if (report.replay !== undefined) {
    const unanswered =
      report.replay.unanswered.length === 0
        ? ''
        : `; no recorded actions for seq ${report.replay.unanswered.join(', ')} (runtime stopped)`;
    writeLine(
      io.stdout,
      `${s.bold('replay:')} ${report.replay.events} events → ${report.replay.actions} actions reproduced, state ${report.replay.finalStateHash.slice(0, 16)}${unanswered}` +
        (report.replay.snapshotsChecked > 0
          ? `; ${report.replay.snapshotsChecked} snapshot(s) equal to the replayed state`
          : ''),
    );
  }
  for (const story of report.tasks) {
    writeLine(io.stdout);
    for (const [index, line] of renderStory(story).entries()) writeLine(io.stdout, index === 0 ? s.bold(line) : line);
  }
  writeLine(io.stdout);
  if (report.failure === undefined) writeLine(io.stdout, s.green('intact'));
}

/**
 * With --database-url (or --state-dir, a daemon's embedded database), the
 * state plane's mirror of this ledger is checked against it too.
 */
async function mirrorCheck(
  values: { readonly 'database-url'?: string | undefined; readonly 'state-dir'?: string | undefined },
  logPath: string,
  io: Io,
): Promise<MirrorCheck | null> {
  const databaseUrl = values['database-url'];
  if (databaseUrl === undefined && values['state-dir'] === undefined) return null;
  if (databaseUrl !== undefined && values['state-dir'] !== undefined)
    throw new UsageError('give --database-url or --state-dir, not both');
  // The nano build defines this as `true`, so the state plane's code is dropped with the branch.
  if ((globalThis as { CRUSTCORE_NANO?: boolean }).CRUSTCORE_NANO !== true) {
    const { checkLedgerMirror } = await import('./inspect-mirror.js');
    const stateDir = daemonStateDir(crustcoreHome(io.env), values['state-dir'], io.cwd);
    return checkLedgerMirror({ logPath, databaseUrl, stateDir });
  }
  throw new UsageError('--database-url and --state-dir need the full crustcore; crustcore-nano has no state plane');
}

export const inspectCommand: Command = {
  ...inspectSpec,
  run: async (args, io) => {
    const { values } = parseArgs({
      args: [...args],
      options: {
        dir: { type: 'string' },
        log: { type: 'string' },
        task: { type: 'string' },
        replay: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        key: { type: 'string' },
        'database-url': { type: 'string' },
        'state-dir': { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    });
    const paths = ledgerPaths(await withDefaultDir(values, io), io);
    if (!existsSync(paths.logPath) || !statSync(paths.logPath).isFile()) {
      writeLine(io.stderr, `${io.err.red('error:')} no log at ${paths.logPath}`);
      return ExitCode.usage;
    }
    const key = findKey(values.key, io);
    if (key.error !== undefined) {
      writeLine(io.stderr, `${io.err.red('error:')} receipt key: ${key.error}`);
      return ExitCode.usage;
    }
    const report = inspectLog({
      ...paths,
      ...(key.key === undefined ? {} : { key: key.key }),
      kernel: kernelReplay(),
      replay: values.replay === true,
      ...(values.task === undefined ? {} : { taskId: values.task }),
    });
    const mirror = await mirrorCheck(values, paths.logPath, io);
    if (values.json === true) {
      writeLine(
        io.stdout,
        JSON.stringify({
          log: paths.logPath,
          keyPath: key.path,
          ...report,
          failure: report.failure ?? null,
          ...(mirror === null ? {} : { mirror: { ledgerId: mirror.ledgerId, ...mirror.report } }),
        }),
      );
    } else {
      printHuman(io, paths.logPath, report);
      if (mirror !== null) {
        const line = mirror.summary;
        writeLine(io.stdout, `${io.out.bold('mirror:')} ${mirror.report.consistent ? line : io.out.red(line)}`);
      }
    }
    if (report.failure === undefined)
      return mirror?.report.consistent === false ? INSPECT_MIRROR_MISMATCH : ExitCode.ok;
    const f = report.failure;
    writeLine(io.stderr, `${io.err.red('integrity check failed')} at seq ${f.seq}: ${f.reason} — ${f.detail}`);
    return INSPECT_EXIT[f.reason];
  },
};
