/**
 * `crustcore doctor`: which worker CLIs are installed here and which
 * versions. Runs each native executable's `--version` on the host (a fixed
 * argv, no model, no network need) with an empty throwaway HOME so probing
 * never writes into the user's home.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTrustedHostCommand } from '@crustcore/sandbox';
import { locateWorkerCli, WORKER_CLI_INSTALL, type WorkerCliName } from './locate-cli.js';

/** One CLI's status for doctor. */
export type WorkerCliStatus =
  | {
      readonly _tag: 'Installed';
      readonly name: WorkerCliName;
      readonly version: string;
      readonly executable: string;
    }
  | {
      readonly _tag: 'Missing' | 'Broken';
      readonly name: WorkerCliName;
      /** What is wrong, in one sentence. */
      readonly message: string;
      /** The command that installs (or reinstalls) it. */
      readonly fix: string;
    };

export interface ProbeOptions {
  /** Host PATH to search (default: process.env.PATH). */
  readonly searchPath?: string;
  /** Per CLI; default 20 s (a cold 400 MB binary on a busy disk can be slow). */
  readonly timeoutMs?: number;
}

const VERSION = /\b(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?)\b/;
const NAMES: readonly WorkerCliName[] = ['codex', 'claude'];

async function probeOne(name: WorkerCliName, options: ProbeOptions): Promise<WorkerCliStatus> {
  const located = locateWorkerCli(name, options.searchPath === undefined ? {} : { searchPath: options.searchPath });
  if (located._tag === 'Left') {
    return { _tag: 'Missing', name, message: located.left.message, fix: located.left.fix };
  }
  const home = mkdtempSync(join(tmpdir(), 'crustcore-probe-'));
  try {
    const result = await runTrustedHostCommand({
      argv: [located.right.executable, '--version'],
      cwd: home,
      env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, NO_COLOR: '1' },
      timeoutMs: options.timeoutMs ?? 20_000,
      maxOutputBytes: 4096,
    });
    const version = VERSION.exec(result.stdout.text)?.[1];
    if (result.startError !== null || result.exitCode !== 0 || version === undefined) {
      const why =
        result.startError?.message ??
        (result.timedOut ? 'timed out' : `exit ${result.exitCode ?? result.signal}: ${result.stderr.text.trim()}`);
      return {
        _tag: 'Broken',
        name,
        message: `${located.right.executable} --version failed: ${why.slice(0, 300)}`,
        fix: WORKER_CLI_INSTALL[name],
      };
    }
    return { _tag: 'Installed', name, version, executable: located.right.executable };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** Probes every worker CLI, one after the other (the machine may be busy; these are cheap). */
export async function probeWorkerClis(options: ProbeOptions = {}): Promise<readonly WorkerCliStatus[]> {
  const statuses: WorkerCliStatus[] = [];
  for (const name of NAMES) statuses.push(await probeOne(name, options));
  return statuses;
}
