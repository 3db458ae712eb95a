/**
 * `run --backend native`: the model checked before anything starts. Loaded
 * only by the full crustcore (nano has no native agent).
 */
import { UsageError } from '../cli/command.js';
import { requireFullBuild } from '../cli/edition.js';

/**
 * The native agent's model, set up once before any worktree, worker or
 * request exists: a model nobody can reach (no key anywhere, only an example
 * endpoint the user never configured) is a usage error (exit 2) that names
 * the provider, its key and how to store it — not four connection errors and
 * a failed verification later.
 */
export async function preflightNativeModel(
  home: string,
  env: NodeJS.ProcessEnv,
  options: Readonly<Record<string, string>>,
): Promise<void> {
  requireFullBuild('the native backend');
  let agent: typeof import('@crustcore/agent');
  try {
    agent = await import('@crustcore/agent');
  } catch {
    throw new UsageError(
      'the native backend needs @crustcore/agent, which is not installed here (npm install @crustcore/agent)',
    );
  }
  const setup = await agent.setupModel({
    home,
    env,
    ...(options.model === undefined ? {} : { model: options.model }),
    ...(options.replay === undefined ? {} : { replay: options.replay }),
    ...(options.modelsConfig === undefined ? {} : { modelsConfig: options.modelsConfig }),
  });
  if (setup._tag === 'Left') {
    const fix = setup.left.fix ?? 'check --replay / --models-config / --model (crustcore models lists the registry)';
    throw new UsageError(`${setup.left.message} — ${fix}`);
  }
}
