/**
 * Where CrustCore keeps its state (docs/architecture.md, "State on disk"):
 * `$CRUSTCORE_HOME` (default ~/.crustcore), with one project directory per
 * repository at `projects/<repo-id>`, where `<repo-id>` names the real path
 * of the repository's git directory (`@crustcore/verify` computes it).
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { openRepository } from '@crustcore/verify';
import type { Io } from './output.js';

export function crustcoreHome(env: NodeJS.ProcessEnv): string {
  const configured = env.CRUSTCORE_HOME;
  return configured !== undefined && configured !== '' ? configured : join(homedir(), '.crustcore');
}

/** The project state directory of the repository containing `io.cwd`, or undefined outside a repository. */
export async function currentProjectDir(io: Io): Promise<string | undefined> {
  const repo = await openRepository(io.cwd);
  return repo._tag === 'Right' ? join(crustcoreHome(io.env), 'projects', repo.right.repoId) : undefined;
}
