/**
 * Where CrustCore keeps its state (docs/architecture.md, "State on disk"):
 * `$CRUSTCORE_HOME` (default ~/.crustcore), with one project directory per
 * repository at `projects/<repo-id>`, where `<repo-id>` names the real path
 * of the repository's git directory (`@crustcore/verify` computes it).
 */
import { join } from 'node:path';
import { crustcoreHome, openRepository } from '@crustcore/verify';
import type { Io } from './output.js';

export { crustcoreHome };

/** The project state directory of the repository containing `io.cwd`, or undefined outside a repository. */
export async function currentProjectDir(io: Io): Promise<string | undefined> {
  const repo = await openRepository(io.cwd);
  return repo._tag === 'Right' ? join(crustcoreHome(io.env), 'projects', repo.right.repoId) : undefined;
}
