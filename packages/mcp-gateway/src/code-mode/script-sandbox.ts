/**
 * Where a code-mode script runs: the sandbox runner (the only spawner) with bubblewrap, in the
 * `worker` profile — no network (its own namespace with loopback only), no shell needed, limits
 * tightened for a short script — and with nothing of the task: not the worktree (a script that
 * could write there would plant files no kernel call recorded, and a server started later from the
 * worktree would load them), not the dependencies, not the home. It sees three binds: the runner
 * and the script (read-only) and the directory of the endpoint's socket (read-only: a socket is
 * connected to, not written).
 */
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mintSandboxExecCap, runSandboxed, type SandboxExecCap, scriptNodeBinary } from '@crustcore/sandbox';
import { CODE_RUNNER_PATH } from '../code-runner-script.js';

const LAYOUT = Object.freeze({
  runner: '/crustcore/code-runner.mjs',
  sockets: '/crustcore/mcp',
  socket: '/crustcore/mcp/code.sock',
  code: '/crustcore/code',
  script: '/crustcore/code/script.mjs',
});

/** Per stream: what the model may see is cut far lower (the result bound); this bounds memory. */
const MAX_OUTPUT_BYTES = 256 * 1024;
const MiB = 1024 * 1024;

/** The host side of one script's sandbox: a fresh 0700 directory, removed when the call ends. */
export interface ScriptDirectories {
  readonly root: string;
  /** The sandbox's (empty) worktree and current directory. */
  readonly cwd: string;
  readonly sockets: string;
  readonly code: string;
  /** Where the endpoint listens (host path of LAYOUT.socket). */
  readonly socketPath: string;
}

export function scriptDirectories(script: string): ScriptDirectories {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'crustcore-code-')));
  const made = { root, cwd: join(root, 'cwd'), sockets: join(root, 'mcp'), code: join(root, 'code') };
  for (const directory of [made.cwd, made.sockets, made.code]) mkdirSync(directory, { mode: 0o700 });
  writeFileSync(join(made.code, 'script.mjs'), script, { mode: 0o400 });
  return { ...made, socketPath: join(made.sockets, 'code.sock') };
}

export function removeScriptDirectories(directories: ScriptDirectories): void {
  // The script file is read-only for its owner: make it removable first (root ignores modes; others do not).
  try {
    chmodSync(join(directories.code, 'script.mjs'), 0o600);
  } catch {
    // Already gone.
  }
  rmSync(directories.root, { recursive: true, force: true });
}

export interface ScriptRun {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  readonly cancelled: boolean;
}

/** The capability for one script, or why there is none (with what to do). Asked before anything is served. */
export function scriptCap(
  workerCap: () => SandboxExecCap,
  directories: ScriptDirectories,
  timeoutMs: number,
): { readonly cap: SandboxExecCap } | { readonly refusal: string } {
  let task: SandboxExecCap;
  try {
    task = workerCap();
  } catch (error) {
    return { refusal: `this task has no sandbox for scripts: ${(error as Error).message}` };
  }
  if (task.backend !== 'bubblewrap')
    return {
      refusal:
        "scripts run only under bubblewrap (no network, nothing of the host), and this task's sandbox is the process jail; install bubblewrap (crustcore doctor says how)",
    };
  const minted = mintSandboxExecCap('worker', {
    backend: 'bubblewrap',
    extraBinds: [
      { source: CODE_RUNNER_PATH, target: LAYOUT.runner, mode: 'read-only' },
      { source: directories.code, target: LAYOUT.code, mode: 'read-only' },
      { source: directories.sockets, target: LAYOUT.sockets, mode: 'read-only' },
    ],
    limits: {
      memoryBytes: 1024 * MiB,
      cpuSeconds: Math.ceil(timeoutMs / 1000) + 1,
      processes: 64,
      fileSizeBytes: 8 * MiB,
      openFiles: 256,
    },
  });
  return minted._tag === 'Left' ? { refusal: minted.left.message } : { cap: minted.right };
}

/** Runs the script's runner in its sandbox until it exits, its time is up, or `signal` stops it. */
export async function runScriptSandboxed(
  cap: SandboxExecCap,
  directories: ScriptDirectories,
  bounds: { readonly timeoutMs: number; readonly signal: AbortSignal },
): Promise<ScriptRun | { readonly refusal: string }> {
  const node = scriptNodeBinary();
  if (node === null) return { refusal: 'no node binary to run scripts with (put node on PATH)' };
  const run = await runSandboxed(cap, {
    argv: [node, '--max-old-space-size=256', LAYOUT.runner, LAYOUT.socket, LAYOUT.script],
    worktreeRoot: directories.cwd,
    cwd: directories.cwd,
    env: {},
    signal: bounds.signal,
    timeoutMs: bounds.timeoutMs,
    maxOutputBytes: MAX_OUTPUT_BYTES,
  });
  if (run._tag === 'Left')
    return { refusal: `${run.left.message}${run.left.fix === null ? '' : ` (${run.left.fix})`}` };
  const result = run.right;
  return {
    stdout: result.stdout.text,
    stderr: result.stderr.text,
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    cancelled: result.cancelled,
  };
}
