/**
 * `SandboxExecCap`: the authority to run processes in a sandbox under one
 * named profile. Only `mintSandboxExecCap` creates one; the private fields
 * make a plain object with the same shape fail at run time, and the private
 * constructor makes it fail at compile time.
 */
import { err, ok, type Result } from '@crustcore/kernel';
import {
  checkEnvironmentBinds,
  type EnvironmentBinds,
  type EnvironmentBindsRequest,
  NO_ENVIRONMENT_BINDS,
} from '../mount/environment-bind.js';
import { checkExtraBinds, type ExtraBind, type ExtraBindRequest } from '../mount/extra-bind.js';
import {
  isSandboxProfileName,
  type ResourceLimits,
  SANDBOX_PROFILES,
  type SandboxBackendKind,
  type SandboxProfile,
  type SandboxProfileName,
  tightenLimits,
} from '../profile/sandbox-profile.js';

/** Options a caller may add when minting; none can widen the profile. */
export interface SandboxCapOptions {
  /** Defaults to the profile's first backend (bubblewrap). `process-jail` must be chosen explicitly. */
  readonly backend?: SandboxBackendKind;
  /** Extra mounts; only for profiles with `allowExtraBinds` and the bubblewrap backend. */
  readonly extraBinds?: readonly ExtraBindRequest[];
  /** Lower limits; a value above the profile's is ignored. */
  readonly limits?: Partial<ResourceLimits>;
  /** Read-only dependency and toolchain binds (any profile but hostile; bubblewrap only). */
  readonly environment?: EnvironmentBindsRequest;
}

/** Why no capability was minted. */
export interface SandboxCapError {
  readonly _tag: 'SandboxCapError';
  readonly reason:
    | 'UnknownProfile'
    | 'BackendNotAllowed'
    | 'ExtraBindsNotAllowed'
    | 'BadExtraBind'
    | 'BadLimits'
    | 'BadEnvironment';
  readonly message: string;
}

const MINT = Symbol('SandboxExecCap.mint');

let construct: (
  profile: SandboxProfile,
  backend: SandboxBackendKind,
  extraBinds: readonly ExtraBind[],
  limits: ResourceLimits,
  environment: EnvironmentBinds,
) => SandboxExecCap;

/** Authority to run sandboxed processes under one profile. Never serialized as authority. */
export class SandboxExecCap {
  readonly #profile: SandboxProfile;
  readonly #backend: SandboxBackendKind;
  readonly #extraBinds: readonly ExtraBind[];
  readonly #limits: ResourceLimits;
  readonly #environment: EnvironmentBinds;

  private constructor(
    token: symbol,
    profile: SandboxProfile,
    backend: SandboxBackendKind,
    extraBinds: readonly ExtraBind[],
    limits: ResourceLimits,
    environment: EnvironmentBinds,
  ) {
    // A cast can reach a private constructor; the token cannot be forged.
    if (token !== MINT) throw new TypeError('SandboxExecCap is minted only by mintSandboxExecCap');
    this.#profile = profile;
    this.#backend = backend;
    this.#extraBinds = Object.freeze([...extraBinds]);
    this.#limits = Object.freeze({ ...limits });
    this.#environment = environment;
    Object.freeze(this);
  }

  static {
    // The only way to construct one from outside the class body, kept module-private.
    construct = (profile, backend, extraBinds, limits, environment) =>
      new SandboxExecCap(MINT, profile, backend, extraBinds, limits, environment);
  }

  /** True only for real capabilities (checks the private field, not the shape). */
  static isCap(value: unknown): value is SandboxExecCap {
    return typeof value === 'object' && value !== null && #profile in value;
  }

  get profile(): SandboxProfile {
    return this.#profile;
  }
  get profileName(): SandboxProfileName {
    return this.#profile.name;
  }
  get backend(): SandboxBackendKind {
    return this.#backend;
  }
  get extraBinds(): readonly ExtraBind[] {
    return this.#extraBinds;
  }
  get limits(): ResourceLimits {
    return this.#limits;
  }
  /** Read-only dependency/toolchain binds (the request to pass on when re-minting). */
  get environment(): EnvironmentBinds {
    return this.#environment;
  }

  /** A description for logs; carries no authority. */
  toJSON(): { profile: SandboxProfileName; backend: SandboxBackendKind; extraBinds: readonly ExtraBind[] } {
    return { profile: this.#profile.name, backend: this.#backend, extraBinds: this.#extraBinds };
  }
}

function checkLimits(limits: Partial<ResourceLimits>): string | null {
  for (const [key, value] of Object.entries(limits)) {
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 1) return `limit ${key} must be a positive integer`;
  }
  return null;
}

/**
 * Mints the capability for a named profile. Refuses unknown profiles, a
 * backend the profile does not allow (`hostile` never runs in the jail), and
 * extra binds the profile does not allow or that fail their checks.
 */
export function mintSandboxExecCap(
  profileName: SandboxProfileName,
  options: SandboxCapOptions = {},
): Result<SandboxCapError, SandboxExecCap> {
  const fail = (reason: SandboxCapError['reason'], message: string) =>
    err<SandboxCapError>({ _tag: 'SandboxCapError', reason, message });
  if (!isSandboxProfileName(profileName)) return fail('UnknownProfile', `no sandbox profile ${String(profileName)}`);
  const profile = SANDBOX_PROFILES[profileName];
  const backend = options.backend ?? profile.backends[0];
  if (!profile.backends.includes(backend)) {
    return fail('BackendNotAllowed', `profile ${profileName} does not run on the ${backend} backend`);
  }
  const requests = options.extraBinds ?? [];
  if (requests.length > 0 && !profile.allowExtraBinds) {
    return fail('ExtraBindsNotAllowed', `profile ${profileName} does not allow extra binds`);
  }
  const binds = checkExtraBinds(requests);
  if (binds._tag === 'Left') return fail('BadExtraBind', `extra bind ${binds.left.index}: ${binds.left.message}`);
  if (backend === 'process-jail' && binds.right.some((bind) => bind.target !== bind.source)) {
    return fail('BadExtraBind', 'the process jail has no mount namespace: extra bind targets must equal their sources');
  }
  const limitProblem = checkLimits(options.limits ?? {});
  if (limitProblem !== null) return fail('BadLimits', limitProblem);
  const environment = mintEnvironment(profileName, backend, options.environment);
  if (environment._tag === 'Left') return fail('BadEnvironment', environment.left);
  const limits = tightenLimits(profile.limits, options.limits ?? {});
  return ok(construct(profile, backend, binds.right, limits, environment.right));
}

function mintEnvironment(
  profileName: SandboxProfileName,
  backend: SandboxBackendKind,
  request: EnvironmentBindsRequest | undefined,
): Result<string, EnvironmentBinds> {
  const empty = (request?.worktree ?? []).length === 0 && (request?.tools ?? []).length === 0;
  if (request === undefined || empty) return ok(NO_ENVIRONMENT_BINDS);
  // Hostile runs see nothing of the user's machine; the jail cannot bind at all.
  if (profileName === 'hostile') return err('profile hostile takes no environment binds');
  if (backend !== 'bubblewrap') return err('environment binds need the bubblewrap backend');
  return checkEnvironmentBinds(request);
}
