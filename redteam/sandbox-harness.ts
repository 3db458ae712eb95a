/**
 * One sandboxed run in a test's worktree (its cwd), refusals thrown: what the resource attacks
 * (sandbox-limits) and the start-up attacks (sandbox-start-attacks) both start their programs with.
 */
import {
  mintSandboxExecCap,
  runSandboxed,
  type SandboxCapOptions,
  type SandboxedResult,
  type SandboxProfileName,
  type SandboxRunSpec,
} from '@crustcore/sandbox';

export async function sandboxedIn(
  worktree: string,
  profile: SandboxProfileName,
  spec: Omit<SandboxRunSpec, 'worktreeRoot' | 'cwd'>,
  options: SandboxCapOptions = {},
): Promise<SandboxedResult> {
  const cap = mintSandboxExecCap(profile, options);
  if (cap._tag === 'Left') throw new Error(cap.left.message);
  const result = await runSandboxed(cap.right, { ...spec, worktreeRoot: worktree, cwd: worktree });
  if (result._tag === 'Left') throw new Error(`refused: ${result.left.reason}: ${result.left.message}`);
  return result.right;
}
