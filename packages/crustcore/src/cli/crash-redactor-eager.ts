/** crustcore-nano's crash-redactor.ts (see there): the same redactor, imported up front. */
import { loadRuntimeRedactor, type Redact } from '@crustcore/runtime';
import { crustcoreHome } from './paths.js';

export async function loadCrashRedactor(env: NodeJS.ProcessEnv): Promise<Redact> {
  return (await loadRuntimeRedactor(crustcoreHome(env), env)).redact;
}
