/**
 * The runtime's redactor for a crash report, loaded only when a report is
 * written: the full crustcore must not load the runtime to print its help.
 * crustcore-nano, one file that bundles the runtime anyway, uses
 * crash-redactor-eager.ts instead (build.mjs swaps it in; a dynamic import
 * there would only add esbuild's lazy-module wrappers to the bundle).
 */
import type { Redact } from '@crustcore/runtime';

export async function loadCrashRedactor(env: NodeJS.ProcessEnv): Promise<Redact> {
  const [{ loadRuntimeRedactor }, { crustcoreHome }] = await Promise.all([
    import('@crustcore/runtime'),
    import('./paths.js'),
  ]);
  return (await loadRuntimeRedactor(crustcoreHome(env), env)).redact;
}
