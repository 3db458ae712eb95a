/**
 * The last resort: a secret in a child's environment. Environments leak
 * (`env` dumps, /proc/PID/environ, crash reports, inherited by every
 * grandchild), so an injection exists only as an explicit, declared value
 * naming the profile that asked for it and why. Nothing else in crustcore
 * puts a secret in an environment.
 */
import { err, ok, type Result } from '@crustcore/kernel';
import type { SecretHandle } from '../handle.js';
import type { SecretMaterial } from '../material.js';

export type EnvInjectionError =
  | { readonly _tag: 'EnvVariableInvalid'; readonly variable: string; readonly reason: string }
  | { readonly _tag: 'EnvReasonMissing' }
  | { readonly _tag: 'EnvSecretMissing'; readonly uri: string }
  | { readonly _tag: 'EnvSecretUnusable'; readonly uri: string };

const VARIABLE = /^[A-Z_][A-Z0-9_]{0,127}$/;
/** Variables that change how programs load or run: a secret there is an attack, not a credential. */
const RESERVED = new Set([
  'PATH',
  'HOME',
  'SHELL',
  'USER',
  'LD_PRELOAD',
  'LD_LIBRARY_PATH',
  'NODE_OPTIONS',
  'PYTHONPATH',
  'BASH_ENV',
  'ENV',
  'IFS',
  'GIT_ASKPASS',
  'SSH_ASKPASS',
]);

export class EnvInjection {
  readonly #variable: string;
  readonly #handle: SecretHandle;
  readonly #profile: string;
  readonly #reason: string;

  private constructor(variable: string, handle: SecretHandle, profile: string, reason: string) {
    this.#variable = variable;
    this.#handle = handle;
    this.#profile = profile;
    this.#reason = reason;
    Object.freeze(this);
  }

  /** Declares that `profile` gets `handle` as `variable`, and why no better way works. */
  static declare(input: {
    readonly variable: string;
    readonly handle: SecretHandle;
    readonly profile: string;
    readonly reason: string;
  }): Result<EnvInjectionError, EnvInjection> {
    if (!VARIABLE.test(input.variable)) {
      return err({ _tag: 'EnvVariableInvalid', variable: input.variable, reason: 'must match [A-Z_][A-Z0-9_]*' });
    }
    if (RESERVED.has(input.variable) || input.variable.startsWith('LD_') || input.variable.startsWith('DYLD_')) {
      return err({ _tag: 'EnvVariableInvalid', variable: input.variable, reason: 'reserved variable' });
    }
    if (input.reason.trim().length < 8 || input.profile.trim() === '') return err({ _tag: 'EnvReasonMissing' });
    return ok(new EnvInjection(input.variable, input.handle, input.profile.trim(), input.reason.trim()));
  }

  get variable(): string {
    return this.#variable;
  }
  get handle(): SecretHandle {
    return this.#handle;
  }
  get profile(): string {
    return this.#profile;
  }
  get reason(): string {
    return this.#reason;
  }

  /** What an audit log records: everything but the value. */
  toJSON(): { variable: string; uri: string; profile: string; reason: string } {
    return { variable: this.#variable, uri: this.#handle.uri, profile: this.#profile, reason: this.#reason };
  }
}

/**
 * `base` plus each declared injection's value. `materials` is keyed by
 * handle name. A missing or multi-line secret fails the whole build: a
 * half-injected environment is worse than none.
 */
export function buildInjectedEnv(
  base: Readonly<Record<string, string>>,
  injections: readonly EnvInjection[],
  materials: ReadonlyMap<string, SecretMaterial>,
): Result<EnvInjectionError, Record<string, string>> {
  const env: Record<string, string> = { ...base };
  for (const injection of injections) {
    const material = materials.get(injection.handle.name);
    if (material === undefined || material.disposed)
      return err({ _tag: 'EnvSecretMissing', uri: injection.handle.uri });
    const value = material.expose();
    if (value.includes('\u0000')) return err({ _tag: 'EnvSecretUnusable', uri: injection.handle.uri });
    env[injection.variable] = value;
  }
  return ok(env);
}
