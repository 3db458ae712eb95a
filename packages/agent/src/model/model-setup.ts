/**
 * Which model the native agent talks to, from the command line's options:
 *
 *  - `replay FILE`: a recorded trajectory, played back turn by turn (offline);
 *  - otherwise the model registry (`modelsConfig FILE`, or the built-in
 *    example), with `model` pinning one model (`provider/model` or a model id),
 *    else the registry's default role;
 *  - `record FILE` wraps whichever provider in a recorder saved after each
 *    attempt.
 *
 * Keys come only from the vault (`$CRUSTCORE_HOME/vault`, opened with the key
 * file named by CRUSTCORE_VAULT_KEYFILE), by `secret://NAME` handle, and go
 * only to their provider. Every key is also registered with a redactor, so the
 * agent scrubs it from anything a model could read.
 */
import { err, ok, type Result } from '@crustcore/kernel';
import {
  buildModelStack,
  defaultRegistry,
  type KeySource,
  type ModelProvider,
  type ModelRegistry,
  pinnedRoute,
  RecordingProvider,
  ReplayProvider,
  readRegistryFile,
  readTrajectoryFile,
  type Trajectory,
} from '@crustcore/net';
import {
  type FileVault,
  openUnattendedVault,
  Redactor,
  registerVaultSecrets,
  SecretHandle,
  SecretMaterial,
  vaultSecret,
} from '@crustcore/secrets';

export interface ModelOptions {
  readonly home: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly model?: string;
  readonly replay?: string;
  readonly record?: string;
  readonly modelsConfig?: string;
  /** A trajectory given directly (the demo's embedded one) instead of `replay`. */
  readonly trajectory?: Trajectory;
}

export interface ModelSetup {
  readonly provider: ModelProvider;
  /** The model id sent in requests (a router may still pick another route). */
  readonly model: string;
  /** `provider/model`, for displays and the session's model entries. */
  readonly label: string;
  readonly registry: ModelRegistry | null;
  /** Removes every known key (and anything that looks like a credential) from text. */
  readonly scrub: (text: string) => string;
  /** Writes the recording, when recording. */
  readonly save: () => Promise<void>;
  /** Notes for the person (a missing vault, a key that is not stored). */
  readonly warnings: readonly string[];
  /** Route hints to send, when the provider is the registry's role router (else empty). */
  readonly routeRoles: { readonly summarize?: string; readonly subagent?: string };
}

export interface ModelSetupError {
  readonly _tag: 'ModelSetupError';
  /** `no-model-key`: no provider that could serve the task has its key (nothing was sent anywhere). */
  readonly kind?: 'no-model-key';
  readonly message: string;
  /** What the person does next, when the message alone does not say. */
  readonly fix?: string;
}

const fail = (message: string): Result<ModelSetupError, never> => err({ _tag: 'ModelSetupError', message });

/**
 * Registry keys fetched once, registered with the redactor, handed to their
 * providers. `secret://NAME` is looked up in the vault first, then in this
 * process's environment variable NAME (how Codex and Claude Code users keep
 * their keys); either way the key goes only into its provider's header.
 */
async function loadKeys(
  registry: ModelRegistry,
  vault: FileVault | null,
  env: ModelOptions['env'],
  redactor: Redactor,
  warnings: string[],
): Promise<Map<string, SecretMaterial>> {
  const keys = new Map<string, SecretMaterial>();
  // Every stored secret, not only the provider keys, is hidden from the model: a repository
  // file or a command's output may contain any of them.
  if (vault !== null) await registerVaultSecrets(vault, redactor);
  for (const provider of registry.providers) {
    const name = provider.keyName;
    if (name === undefined || keys.has(name)) continue;
    const handle = SecretHandle.create(name);
    if (handle._tag === 'Left') continue;
    let material = vault === null ? null : await vaultSecret(vault, name);
    if (material === null) {
      const fromEnv = env[name];
      const parsed = fromEnv === undefined || fromEnv === '' ? null : SecretMaterial.fromText(fromEnv);
      if (parsed !== null && parsed._tag === 'Right') material = parsed.right;
    }
    if (material === null) {
      if (vault !== null && provider.models.some((model) => model.roles.length > 0))
        warnings.push(`secret://${name} is neither in the vault nor in the environment`);
      continue;
    }
    keys.set(name, material);
    redactor.register(handle.right, material);
  }
  vault?.close();
  return keys;
}

/**
 * The providers a task may use: keyed ones whose key was found, and keyless
 * ones the user configured (their own registry file, or named with
 * `--model provider/model`). The shipped example's keyless entry (a local
 * Ollama) is not the user's configuration: falling back to it would send
 * requests to an endpoint nobody set up (and print ECONNREFUSED per attempt).
 */
function usableRegistry(
  registry: ModelRegistry,
  keys: ReadonlyMap<string, SecretMaterial>,
  userRegistry: boolean,
  pinnedProvider: string | undefined,
): ModelRegistry {
  const providers = registry.providers.filter((provider) =>
    provider.keyName === undefined ? userRegistry || provider.id === pinnedProvider : keys.has(provider.keyName),
  );
  return { ...registry, providers };
}

/** The error for a registry none of whose candidates for the task has a key: which provider needs which key, how to store it. */
export function noModelKey(
  registry: ModelRegistry,
  wanted: string | undefined,
  vaultReason: string | null,
): ModelSetupError {
  const pinned = wanted === undefined ? null : pickModel(registry, wanted);
  const candidates = registry.providers.filter((provider) =>
    pinned === null
      ? provider.models.some((model) => model.roles.includes(registry.defaultRole))
      : provider.id === pinned.provider,
  );
  const needs = candidates
    .filter((provider) => provider.keyName !== undefined)
    .map((provider) => `${provider.id} needs ${provider.keyName}`);
  const first = candidates.find((provider) => provider.keyName !== undefined)?.keyName ?? 'NAME';
  const message =
    needs.length > 0
      ? `no model key found for ${wanted === undefined ? 'the default model' : wanted}: ${needs.join(', ')} (looked in the environment and ${vaultReason === null ? 'the vault' : `not in the vault: ${vaultReason}`})`
      : `no configured model for ${wanted === undefined ? 'the default model' : wanted}: the example registry's local endpoint is not yours until you configure it`;
  const fix =
    `store a key with "crustcore secret set ${first}" (runs read the vault with CRUSTCORE_VAULT_KEYFILE set) or export ${first}=…; ` +
    'or give your own registry with --models-config FILE (a local endpoint such as Ollama needs no key); "crustcore models" shows which keys are found';
  return { _tag: 'ModelSetupError', kind: 'no-model-key', message, fix };
}

function pickModel(registry: ModelRegistry, wanted: string | undefined): { provider: string; model: string } | null {
  if (wanted !== undefined) {
    const slash = wanted.indexOf('/');
    const providerId = slash > 0 ? wanted.slice(0, slash) : null;
    const modelId = slash > 0 ? wanted.slice(slash + 1) : wanted;
    for (const provider of registry.providers) {
      if (providerId !== null && provider.id !== providerId) continue;
      if (provider.models.some((model) => model.id === modelId)) return { provider: provider.id, model: modelId };
    }
    // A model id the registry does not list, on a named provider: ask that provider anyway.
    if (providerId !== null && registry.providers.some((provider) => provider.id === providerId))
      return { provider: providerId, model: modelId };
    return null;
  }
  for (const provider of registry.providers) {
    const model = provider.models.find((m) => m.roles.includes(registry.defaultRole));
    if (model !== undefined) return { provider: provider.id, model: model.id };
  }
  return null;
}

type Chosen = Pick<ModelSetup, 'provider' | 'model' | 'label' | 'registry' | 'routeRoles'>;

async function replayModel(options: ModelOptions): Promise<Result<ModelSetupError, Chosen>> {
  let trajectory = options.trajectory;
  if (trajectory === undefined) {
    const read = await readTrajectoryFile(options.replay as string);
    if (read._tag === 'Left') return fail(`--replay ${options.replay}: ${read.left.message}`);
    trajectory = read.right;
  }
  const model = options.model ?? trajectory.turns.find((turn) => turn.model !== undefined)?.model ?? 'replay';
  return ok({
    provider: new ReplayProvider(trajectory),
    model,
    label: `replay/${model}`,
    registry: null,
    routeRoles: {},
  });
}

/** The registry's model: keys loaded and registered with the redactor, only usable providers routed to. */
async function registryModel(
  options: ModelOptions,
  redactor: Redactor,
  warnings: string[],
): Promise<Result<ModelSetupError, Chosen>> {
  const loaded = options.modelsConfig === undefined ? defaultRegistry() : await readRegistryFile(options.modelsConfig);
  if (loaded._tag === 'Left') return fail(`model registry: ${loaded.left.problems.join('; ')}`);
  const full = loaded.right;
  const { vault, reason } = await openUnattendedVault(options.home, options.env);
  const warning = reason === null ? null : `${reason}: keyed providers without a key will report auth errors`;
  const keys = await loadKeys(full, vault, options.env, redactor, warnings);
  // The missing vault matters only when a keyed provider found its key nowhere else either.
  if (warning !== null && full.providers.some((p) => p.keyName !== undefined && !keys.has(p.keyName)))
    warnings.push(warning);
  const wanted = options.model;
  const slash = wanted === undefined ? -1 : wanted.indexOf('/');
  const pinnedProvider = wanted !== undefined && slash > 0 ? wanted.slice(0, slash) : undefined;
  const registry = usableRegistry(full, keys, options.modelsConfig !== undefined, pinnedProvider);
  const stack = buildModelStack(registry, { resolveKey: (name): KeySource | undefined => keys.get(name) });
  const chosen = pickModel(registry, wanted);
  // The full registry has a model for this, but no provider of it has a key: say which, before any request.
  if (chosen === null && pickModel(full, wanted) !== null) return err(noModelKey(full, wanted, reason));
  if (chosen === null) {
    return fail(
      wanted === undefined
        ? `the registry has no model for its default role "${registry.defaultRole}"`
        : `no model "${wanted}" in the registry (use provider/model or a listed model id)`,
    );
  }
  const label = `${chosen.provider}/${chosen.model}`;
  const pinned = stack.providers.get(chosen.provider);
  if (wanted !== undefined && pinned !== undefined)
    return ok({
      provider: pinnedRoute({ provider: pinned, model: chosen.model }),
      model: chosen.model,
      label,
      registry,
      routeRoles: {},
    });
  const roles = new Set(stack.router.roles);
  const summarize = roles.has('summarize') ? 'summarize' : undefined;
  const subagent = roles.has('research') ? 'research' : summarize;
  const routeRoles = {
    ...(summarize === undefined ? {} : { summarize }),
    ...(subagent === undefined ? {} : { subagent }),
  };
  return ok({ provider: stack.router, model: chosen.model, label, registry, routeRoles });
}

export async function setupModel(options: ModelOptions): Promise<Result<ModelSetupError, ModelSetup>> {
  const redactor = new Redactor();
  const scrub = (text: string): string => redactor.redactText(text);
  const warnings: string[] = [];
  const chosen =
    options.trajectory !== undefined || options.replay !== undefined
      ? await replayModel(options)
      : await registryModel(options, redactor, warnings);
  if (chosen._tag === 'Left') return chosen;
  let provider: ModelProvider = chosen.right.provider;
  let save = async (): Promise<void> => undefined;
  if (options.record !== undefined) {
    const recording = new RecordingProvider(provider);
    const path = options.record;
    provider = recording;
    save = async () => {
      await recording.save(path);
    };
  }
  return ok({ ...chosen.right, provider, scrub, save, warnings });
}
