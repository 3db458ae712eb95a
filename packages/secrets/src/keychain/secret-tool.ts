/**
 * The OS keychain on Linux, through libsecret's `secret-tool` (the Secret
 * Service: GNOME Keyring, KWallet). Values travel over stdin (store) and
 * stdout (lookup), never argv, and every run goes through the sandbox
 * package's trusted host runner with an explicit environment, a timeout and
 * an output bound.
 *
 * Items are tagged `service=crustcore name=<NAME>`; the label shown in the
 * keyring is `crustcore: <label>`.
 */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { delimiter, isAbsolute, join } from 'node:path';
import { err, ok, type Result } from '@crustcore/kernel';
import { type ProcessResult, type ProcessSpec, runTrustedHostCommand } from '@crustcore/sandbox';
import { SecretHandle } from '../handle.js';
import { MAX_SECRET_BYTES, SecretMaterial } from '../material.js';
import type { SecretStore, StoredSecret } from '../store.js';
import type { StoreError } from '../vault/errors.js';

// ─── model ────────────────────────────────────────────────────────────────

export const KEYCHAIN_SERVICE = 'crustcore';

export type KeychainProbe =
  | { readonly available: true; readonly executable: string }
  | { readonly available: false; readonly reason: string };

export interface SecretToolOptions {
  /** Environment for `secret-tool` (PATH, DBUS_SESSION_BUS_ADDRESS, HOME, …). Nothing else is passed. */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly timeoutMs?: number;
  /** The runner; default `runTrustedHostCommand` from @crustcore/sandbox. */
  readonly run?: (spec: ProcessSpec) => Promise<ProcessResult>;
}

const DEFAULT_TIMEOUT_MS = 10_000;
/** Lookup output is one secret; search output is a few lines per item. */
const MAX_OUTPUT_BYTES = 4 * MAX_SECRET_BYTES;

// ─── probe ────────────────────────────────────────────────────────────────

async function findOnPath(program: string, path: string | undefined): Promise<string | null> {
  if (isAbsolute(program)) {
    return access(program, constants.X_OK).then(
      () => program,
      () => null,
    );
  }
  for (const directory of (path ?? '').split(delimiter)) {
    if (directory === '' || !isAbsolute(directory)) continue;
    const candidate = join(directory, program);
    const found = await access(candidate, constants.X_OK).then(
      () => true,
      () => false,
    );
    if (found) return candidate;
  }
  return null;
}

/**
 * Whether the keychain can be used: `secret-tool` on PATH and a D-Bus
 * session bus to reach the Secret Service. Spawns nothing.
 */
export async function probeSecretTool(env: Readonly<Record<string, string>>): Promise<KeychainProbe> {
  const executable = await findOnPath('secret-tool', env.PATH);
  if (executable === null) {
    return { available: false, reason: 'secret-tool (libsecret-tools) is not installed or not on PATH' };
  }
  if ((env.DBUS_SESSION_BUS_ADDRESS ?? '') === '') {
    return { available: false, reason: 'no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset)' };
  }
  return { available: true, executable };
}

// ─── the store ────────────────────────────────────────────────────────────

const describeFailure = (result: ProcessResult): string => {
  if (result.startError !== null) return `secret-tool could not start (${result.startError.reason})`;
  if (result.timedOut) return 'secret-tool timed out';
  // stderr of secret-tool names D-Bus errors; it never contains the value (values go over stdin/stdout).
  const detail = result.stderr.text.trim().split('\n')[0]?.slice(0, 200) ?? '';
  return `secret-tool exited with ${result.exitCode ?? result.signal}${detail === '' ? '' : `: ${detail}`}`;
};

export class SecretToolKeychain implements SecretStore {
  readonly kind = 'keychain' as const;
  readonly #executable: string;
  readonly #options: SecretToolOptions;

  private constructor(executable: string, options: SecretToolOptions) {
    this.#executable = executable;
    this.#options = options;
  }

  /** Probes first; an unavailable keychain is a typed error carrying the reason. */
  static async open(options: SecretToolOptions): Promise<Result<StoreError, SecretToolKeychain>> {
    const probe = await probeSecretTool(options.env);
    if (!probe.available) return err({ _tag: 'StoreUnavailable', reason: probe.reason });
    return ok(new SecretToolKeychain(probe.executable, options));
  }

  #run(args: readonly string[], stdin?: Uint8Array): Promise<ProcessResult> {
    const run = this.#options.run ?? runTrustedHostCommand;
    const spec: ProcessSpec = {
      argv: [this.#executable, ...args],
      cwd: this.#options.cwd ?? '/',
      env: this.#options.env,
      timeoutMs: this.#options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxOutputBytes: MAX_OUTPUT_BYTES,
      ...(stdin === undefined ? {} : { stdin }),
    };
    return run(spec);
  }

  async get(handle: SecretHandle): Promise<Result<StoreError, SecretMaterial>> {
    const result = await this.#run(['lookup', 'service', KEYCHAIN_SERVICE, 'name', handle.name]);
    // secret-tool lookup exits 1 with no output when nothing matches.
    if (result.startError === null && result.exitCode === 1 && result.stdout.totalBytes === 0) {
      return err({ _tag: 'SecretNotFound', uri: handle.uri });
    }
    if (result.exitCode !== 0) {
      return err({ _tag: 'StoreCommandFailed', operation: 'look up the secret', reason: describeFailure(result) });
    }
    if (result.stdout.truncated) {
      return err({ _tag: 'SecretUnusable', uri: handle.uri, reason: 'longer than the bound' });
    }
    const material = SecretMaterial.fromText(result.stdout.text);
    if (material._tag === 'Left') return err({ _tag: 'SecretUnusable', uri: handle.uri, reason: material.left._tag });
    return ok(material.right);
  }

  async set(handle: SecretHandle, material: SecretMaterial): Promise<Result<StoreError, void>> {
    const value = new TextEncoder().encode(material.expose());
    try {
      const result = await this.#run(
        ['store', `--label=crustcore: ${handle.label}`, 'service', KEYCHAIN_SERVICE, 'name', handle.name],
        value,
      );
      if (result.exitCode !== 0) {
        return err({ _tag: 'StoreCommandFailed', operation: 'store the secret', reason: describeFailure(result) });
      }
      return ok(undefined);
    } finally {
      value.fill(0);
    }
  }

  async remove(handle: SecretHandle): Promise<Result<StoreError, boolean>> {
    const present = await this.#names();
    if (present._tag === 'Left') return present;
    if (!present.right.some((entry) => entry.name === handle.name)) return ok(false);
    const result = await this.#run(['clear', 'service', KEYCHAIN_SERVICE, 'name', handle.name]);
    if (result.exitCode !== 0) {
      return err({ _tag: 'StoreCommandFailed', operation: 'remove the secret', reason: describeFailure(result) });
    }
    return ok(true);
  }

  async list(): Promise<Result<StoreError, readonly StoredSecret[]>> {
    const names = await this.#names();
    if (names._tag === 'Left') return names;
    const listed: StoredSecret[] = [];
    for (const { name, label } of names.right) {
      const handle = SecretHandle.create(name, label ?? undefined);
      const fallback = handle._tag === 'Left' ? SecretHandle.create(name) : handle;
      if (fallback._tag === 'Right') listed.push({ handle: fallback.right, updatedAtMs: null });
    }
    return ok(listed);
  }

  /**
   * `secret-tool search --all` prints each item's attributes, label and
   * (unless locked) its secret. Only `attribute.name` and `label` lines are
   * read; the output text is dropped as soon as they are picked out.
   */
  async #names(): Promise<Result<StoreError, { name: string; label: string | null }[]>> {
    const result = await this.#run(['search', '--all', 'service', KEYCHAIN_SERVICE]);
    if (result.startError === null && result.exitCode === 1 && result.stdout.totalBytes === 0) return ok([]);
    if (result.exitCode !== 0) {
      return err({ _tag: 'StoreCommandFailed', operation: 'list secrets', reason: describeFailure(result) });
    }
    const items: { name: string; label: string | null }[] = [];
    let label: string | null = null;
    for (const line of result.stdout.text.split('\n')) {
      if (line.startsWith('[')) label = null;
      const labelMatch = /^label = crustcore: (.*)$/.exec(line);
      if (labelMatch !== null) label = labelMatch[1] ?? null;
      const nameMatch = /^attribute\.name = (.*)$/.exec(line);
      if (nameMatch !== null) items.push({ name: nameMatch[1] ?? '', label });
    }
    return ok(items);
  }

  toString(): string {
    return `SecretToolKeychain(${this.#executable})`;
  }
}
