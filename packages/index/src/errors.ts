/** Failures of `crustcore index`, as values: each says what went wrong and what to do next. */
export type IndexErrorReason = 'unreadable-dir' | 'not-a-repository' | 'cache-inside-worktree' | 'git-failed' | 'io';

export interface IndexError {
  readonly _tag: 'IndexError';
  readonly reason: IndexErrorReason;
  readonly message: string;
  /** What the user can do about it. */
  readonly hint: string;
}

const HINTS: Readonly<Record<IndexErrorReason, string>> = {
  'unreadable-dir': 'check the path and its permissions, or pass --dir with a readable directory',
  'not-a-repository': 'run it inside a git work tree, or pass --dir with one (git init creates one)',
  'cache-inside-worktree': 'set CRUSTCORE_HOME to a directory outside the repository',
  'git-failed': 'run `git status` in the repository to see what git reports, then try again',
  io: 'check free space and permissions under $CRUSTCORE_HOME, then try again',
};

export const indexError = (reason: IndexErrorReason, message: string): IndexError => ({
  _tag: 'IndexError',
  reason,
  message,
  hint: HINTS[reason],
});
