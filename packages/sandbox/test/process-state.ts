/**
 * Whether a pid still runs. A killed process reparented to this container's
 * init may stay a zombie for a while; a zombie runs nothing, so it counts as dead.
 */
import { readFileSync } from 'node:fs';

export function isRunning(pid: number): boolean {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return false;
  }
  const state = /State:\s+(\S)/.exec(status)?.[1];
  return state !== undefined && state !== 'Z' && state !== 'X';
}

/** Polls until `pid` is no longer running or `withinMs` passes; returns whether it stopped. */
export async function waitUntilGone(pid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (isRunning(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((done) => setTimeout(done, 20));
  }
  return true;
}
