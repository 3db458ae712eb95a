/**
 * CrustCore's state directory: `$CRUSTCORE_HOME`, default `~/.crustcore`.
 * Worktrees, journals and patch records live here, outside every repository,
 * so nothing a task does can show up in the user's `git status`.
 */
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

export function crustcoreHome(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const configured = env.CRUSTCORE_HOME;
  if (configured !== undefined && configured !== '' && isAbsolute(configured)) return configured;
  return join(homedir(), '.crustcore');
}

export const worktreesDir = (home: string): string => join(home, 'worktrees');
export const journalDir = (home: string): string => join(home, 'journal');
export const patchesDir = (home: string): string => join(home, 'patches');
export const scratchDir = (home: string): string => join(home, 'tmp');
