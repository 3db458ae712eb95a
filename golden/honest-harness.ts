/**
 * Helpers for the golden "honest failures" tests: worker files outside the
 * repository, the kept patch of a task, and a CLI child that can be waited
 * on by handshake (a marker file appears) instead of by elapsed time.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CLI, type Sandbox } from './cli-harness.js';

/** Writes a file (creating directories); `executable` sets mode 0755. */
export function writeFile(path: string, text: string, executable = false): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  if (executable) chmodSync(path, 0o755);
  return path;
}

/** The patch a task kept under $CRUSTCORE_HOME/patches (what verify ran), or null. */
export function keptPatch(box: Sandbox, taskId: string): string | null {
  const path = join(box.home, 'patches', taskId, 'patch.diff');
  return existsSync(path) ? readFileSync(path, 'utf8') : null;
}

/** Every path under `dir` (depth-first), for "nothing was created" checks. */
export function listTree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    out.push(path);
    if (entry.isDirectory()) out.push(...listTree(path));
  }
  return out;
}

export interface LiveCli {
  readonly child: ChildProcess;
  readonly exited: Promise<{ status: number | null; stdout: string; stderr: string }>;
}

/** Starts the CLI without waiting; `nodeArgs` go before the script (e.g. --expose-gc). */
export function startCli(box: Sandbox, args: readonly string[], nodeArgs: readonly string[] = []): LiveCli {
  const child = spawn(process.execPath, [...nodeArgs, CLI, ...args], {
    cwd: box.repo,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: box.root, CRUSTCORE_HOME: box.home, NO_COLOR: '1' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
  return { child, exited };
}

/**
 * Resolves when a file named `name` exists somewhere under `root` (a
 * handshake: the worker writes it once it is running). Rejects if the CLI
 * exits first, so a broken run fails the test instead of hanging it.
 */
export function fileAppears(root: string, name: string, cli: LiveCli): Promise<string> {
  return new Promise((resolve, reject) => {
    let done = false;
    const look = (): void => {
      if (done) return;
      const found = listTree(root).find((path) => path.endsWith(`/${name}`));
      if (found !== undefined) {
        done = true;
        resolve(found);
        return;
      }
      setTimeout(look, 50);
    };
    void cli.exited.then((result) => {
      if (done) return;
      done = true;
      reject(
        new Error(`the CLI exited (${result.status}) before ${name} appeared:\n${result.stdout}\n${result.stderr}`),
      );
    });
    look();
  });
}

/** Processes whose command line contains `token` (from /proc; this machine is Linux). */
export function processesWith(token: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      if (cmdline.includes(token)) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}
