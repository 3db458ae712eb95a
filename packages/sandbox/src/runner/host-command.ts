/**
 * Trusted host commands: git, find and the like, never a model's command (those go through
 * `runSandboxed`). Started through the spawn broker when this machine can run it (spawn-broker.ts),
 * else by Node itself; either way with `runProcess`'s contract.
 */
import { type ProcessResult, type ProcessSpec, resolveLaunchProgram, runProcess } from './process-runner.js';
import type { SpawnBroker } from './spawn-broker.js';

/** undefined: not asked yet; null inside: this process starts its children itself. */
let shared: Promise<SpawnBroker | null> | undefined;

/**
 * The process's broker, started on first use (one start for calls that arrive together); null when
 * it cannot run, is turned off (CRUSTCORE_SPAWN_BROKER=0), or in nano, which carries none of it.
 */
async function broker(): Promise<SpawnBroker | null> {
  shared ??=
    (globalThis as { CRUSTCORE_NANO?: boolean }).CRUSTCORE_NANO === true || process.env.CRUSTCORE_SPAWN_BROKER === '0'
      ? Promise.resolve(null)
      : import('./spawn-broker.js').then(
          (module) => module.SpawnBroker.start(),
          () => null,
        );
  const started = await shared.catch(() => null); // no temp directory, no perl to start: Node starts the children
  // A broker that died is not started again: its children are started directly from then on.
  return started === null || started.dead ? null : started;
}

/**
 * Runs a fixed, trusted host binary (git) WITHOUT a sandbox. For
 * `@crustcore/confine` and `@crustcore/verify` only; model-chosen commands
 * go through `runSandboxed`. The child gets exactly `spec.env`, its own
 * process group, bounded output, and is killed with its group on timeout or
 * abort. A program that cannot be started resolves with `startError` set
 * (`reason: 'NotFound'` for ENOENT); the promise never rejects.
 */
export async function runTrustedHostCommand(spec: ProcessSpec): Promise<ProcessResult> {
  const through = await broker();
  // Until perl is up (~15 ms), a command would wait for it: the first ones of a CLI start themselves,
  // while this process is still small and its fork cheap.
  if (through === null || !through.ready) return runProcess(spec);
  const program = resolveLaunchProgram(spec);
  if (typeof program !== 'string') return program;
  return (await through.run(spec, program)) ?? runProcess(spec);
}
