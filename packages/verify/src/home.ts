/**
 * CrustCore's state directory: `$CRUSTCORE_HOME`, default `~/.crustcore`.
 * Worktrees, journals and patch records live here, outside every repository,
 * so nothing a task does can show up in the user's `git status`.
 */
import { join } from 'node:path';
import { crustcoreHome } from '@crustcore/ledger';

export { crustcoreHome };

export const worktreesDir = (home: string): string => join(home, 'worktrees');
export const journalDir = (home: string): string => join(home, 'journal');
export const patchesDir = (home: string): string => join(home, 'patches');
export const scratchDir = (home: string): string => join(home, 'tmp');
