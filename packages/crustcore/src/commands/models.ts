/**
 * `crustcore models [--config FILE] [--probe] [--json]`: lists the model
 * registry (the shipped example, or FILE) and, with --probe, what each
 * endpoint reports serving. The net pack is loaded only when this command
 * runs, so the nano CLI carries no provider code.
 *
 * Keys: the registry names them by handle (`secret://NAME`). A handle is
 * resolved as for the native agent: the vault first (with a key file), then
 * the environment variable NAME; the key goes only into that provider's
 * request header and is redacted from any error text.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { KeySource, ModelRegistry, ProbeReport } from '@crustcore/net';
import type { Command } from '../cli/command.js';
import { UsageError } from '../cli/command.js';
import { ExitCode } from '../cli/exit-codes.js';
import { type Io, writeLine } from '../cli/output.js';
import { crustcoreHome } from '../cli/paths.js';
import { modelsSpec } from './pack-specs.js';

export interface ModelsCommandDependencies {
  /** Maps a key handle's NAME to its secret; undefined when the secret store has none. */
  readonly resolveKey?: (name: string) => KeySource | undefined;
}

/** Vault (when a key file opens it without a prompt), else the environment. */
function hostKeys(io: Io): (name: string) => KeySource | undefined {
  return (name) => {
    const keyFile = io.env.CRUSTCORE_VAULT_KEYFILE;
    const fromEnv = io.env[name];
    if ((keyFile === undefined || keyFile === '') && (fromEnv === undefined || fromEnv === '')) return undefined;
    return async (): Promise<string> => {
      const secrets = await import('@crustcore/secrets');
      const { vault } = await secrets.openUnattendedVault(crustcoreHome(io.env), io.env);
      if (vault !== null) {
        try {
          const stored = await secrets.vaultSecret(vault, name);
          if (stored !== null) return stored.expose();
        } finally {
          vault.close();
        }
      }
      // Empty means "not available": the probe reports it without asking the endpoint.
      return fromEnv ?? '';
    };
  };
}

type KeyPlace = 'environment' | 'vault' | 'missing';

/** Where each key handle's secret is found (env first, as the agent reads it, then the vault), never its value. */
async function keyPlaces(io: Io, registry: ModelRegistry): Promise<ReadonlyMap<string, KeyPlace>> {
  const names = [...new Set(registry.providers.flatMap((p) => (p.keyName === undefined ? [] : [p.keyName])))];
  const places = new Map<string, KeyPlace>();
  const secrets = await import('@crustcore/secrets');
  const { vault } = await secrets.openUnattendedVault(crustcoreHome(io.env), io.env);
  try {
    for (const name of names) {
      if ((io.env[name] ?? '') !== '') places.set(name, 'environment');
      else if (vault !== null && (await secrets.vaultSecret(vault, name)) !== null) places.set(name, 'vault');
      else places.set(name, 'missing');
    }
  } finally {
    vault?.close();
  }
  return places;
}

/** Whether the native agent could start with this registry, in the words `run` and `chat` use when it cannot. */
async function readiness(io: Io, config: string | undefined): Promise<{ ok: boolean; message?: string; fix?: string }> {
  const agent = await import('@crustcore/agent');
  const setup = await agent.setupModel({
    home: crustcoreHome(io.env),
    env: io.env,
    ...(config === undefined ? {} : { modelsConfig: config }),
  });
  if (setup._tag === 'Right') return { ok: true, message: `the native agent would use ${setup.right.label}` };
  return { ok: false, message: setup.left.message, ...(setup.left.fix === undefined ? {} : { fix: setup.left.fix }) };
}

function keyText(io: Io, name: string | undefined, places: ReadonlyMap<string, KeyPlace>): string {
  if (name === undefined) return io.out.dim('no key');
  const place = places.get(name) ?? 'missing';
  if (place === 'missing') return io.out.yellow(`secret://${name} missing — crustcore secret set ${name}`);
  return io.out.green(`secret://${name} found (${place})`);
}

function priceText(prices: ModelRegistry['providers'][number]['models'][number]['prices']): string {
  if (prices === undefined) return 'no price';
  const cache = [
    prices.cacheReadPerMillion === undefined ? '' : `cache read $${prices.cacheReadPerMillion}`,
    prices.cacheWritePerMillion === undefined ? '' : `cache write $${prices.cacheWritePerMillion}`,
  ].filter((part) => part !== '');
  return `$${prices.inputPerMillion} in / $${prices.outputPerMillion} out per Mtok${cache.length > 0 ? ` (${cache.join(', ')})` : ''}`;
}

function probeText(io: Io, report: ProbeReport): string[] {
  const s = io.out;
  if (!report.ok) {
    const error = report.error;
    return [`    ${s.red('probe failed')}: ${error === undefined ? 'unknown' : `${error._tag} — ${error.message}`}`];
  }
  const lines = [`    ${s.green('probe ok')}: endpoint lists ${report.models.length} model(s)`];
  for (const model of report.configured) {
    lines.push(`      ${model.listed === true ? s.green('listed    ') : s.yellow('not listed')} ${model.id}`);
  }
  return lines;
}

interface Report {
  readonly source: string;
  readonly registry: ModelRegistry;
  readonly probes: readonly ProbeReport[] | undefined;
  readonly places: ReadonlyMap<string, KeyPlace>;
  readonly ready: { ok: boolean; message?: string; fix?: string };
}

function readyLines(io: Io, ready: Report['ready']): string[] {
  if (ready.ok) return [`${io.out.bold('Ready')}: ${ready.message ?? ''}`, ''];
  return [
    `${io.out.red('Not ready')}: ${ready.message ?? ''}`,
    ...(ready.fix === undefined ? [] : [`  ${ready.fix}`]),
    '',
  ];
}

function humanReport(io: Io, { source, registry, probes, places, ready }: Report): string {
  const s = io.out;
  const lines = [
    `${s.bold('Model registry')}: ${source}`,
    `${s.bold('Default role')}: ${registry.defaultRole}`,
    ...readyLines(io, ready),
  ];
  registry.providers.forEach((provider, index) => {
    lines.push(
      `${s.cyan(provider.id)}  ${provider.kind}  ${provider.baseUrl}  ${keyText(io, provider.keyName, places)}`,
    );
    for (const model of provider.models) {
      const facts = [
        model.contextWindow === undefined ? 'context ?' : `context ${model.contextWindow.toLocaleString('en-US')}`,
        model.tools === undefined ? 'tools ?' : model.tools ? 'tools' : 'no tools',
        priceText(model.prices),
        model.roles.length === 0 ? 'no roles' : `roles: ${model.roles.join(', ')}`,
      ];
      lines.push(`  ${model.id}  ${s.dim(facts.join(' · '))}`);
    }
    const probe = probes?.[index];
    if (probe !== undefined) lines.push(...probeText(io, probe));
    lines.push('');
  });
  if (probes === undefined) lines.push(s.dim('Beliefs from the registry file. Run with --probe to ask each endpoint.'));
  return lines.join('\n');
}

export function createModelsCommand(dependencies: ModelsCommandDependencies = {}): Command {
  return {
    ...modelsSpec,
    run: async (args: readonly string[], io: Io): Promise<ExitCode> => {
      const { values, positionals } = parseArgs({
        args: [...args],
        options: { config: { type: 'string' }, probe: { type: 'boolean' }, json: { type: 'boolean' } },
        allowPositionals: true,
        strict: true,
      });
      if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
      const net = await import('@crustcore/net');
      const source = values.config === undefined ? 'built-in example registry' : resolve(io.cwd, values.config);
      const loaded = values.config === undefined ? net.defaultRegistry() : await net.readRegistryFile(source);
      if (loaded._tag === 'Left') {
        writeLine(io.stderr, `${io.err.red('error:')} invalid model registry (${source}):`);
        for (const problem of loaded.left.problems) writeLine(io.stderr, `  - ${problem}`);
        return ExitCode.usage;
      }
      const registry = loaded.right;
      const resolveKey = dependencies.resolveKey ?? hostKeys(io);
      const probes = values.probe === true ? await net.probeRegistry(registry, resolveKey) : undefined;
      const places = await keyPlaces(io, registry);
      const ready = await readiness(io, values.config === undefined ? undefined : source);
      if (values.json === true) {
        const keys = Object.fromEntries(places);
        writeLine(
          io.stdout,
          JSON.stringify({ source, registry, keys, ready, ...(probes === undefined ? {} : { probes }) }, null, 2),
        );
      } else {
        writeLine(io.stdout, humanReport(io, { source, registry, probes, places, ready }));
      }
      return ExitCode.ok;
    },
  };
}

export const modelsCommand: Command = createModelsCommand();
