/**
 * `crustcore mcp add|list|remove|import|approve`: the registry of the user's
 * MCP servers (the gateway's side; `crustcore mcp` with no sub-command is
 * still CrustCore's own MCP server). The registry lives at
 * `$CRUSTCORE_HOME/mcp/servers.json` and holds handles, never credentials.
 *
 * Nothing here starts a server except `approve`, which a person runs to see
 * each tool's definition (and, for a changed one, the diff) and, with
 * `--yes`, to pin them. The gateway pack is imported only when this runs.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ServerRecord } from '@crustcore/mcp-gateway';
import { UsageError } from '../cli/command.js';
import { ExitCode } from '../cli/exit-codes.js';
import { type Io, writeLine } from '../cli/output.js';
import { crustcoreHome } from '../cli/paths.js';
import { approveServer } from './mcp-approve.js';
import { fail, type RegistryContext, save } from './mcp-registry-context.js';

export const MCP_REGISTRY_ACTIONS = ['add', 'list', 'remove', 'import', 'approve'] as const;
export type RegistryAction = (typeof MCP_REGISTRY_ACTIONS)[number];
export const isRegistryAction = (word: string | undefined): word is RegistryAction =>
  (MCP_REGISTRY_ACTIONS as readonly string[]).includes(word ?? '');

const OPTIONS = {
  url: { type: 'string' },
  env: { type: 'string', multiple: true },
  auth: { type: 'string' },
  repo: { type: 'string', multiple: true },
  'any-repo': { type: 'boolean', default: false },
  policy: { type: 'string' },
  timeout: { type: 'string' },
  'read-path': { type: 'string', multiple: true },
  from: { type: 'string' },
  format: { type: 'string' },
  project: { type: 'string' },
  yes: { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
} as const;

const parseOptions = (args: readonly string[]) =>
  parseArgs({ args: [...args], options: OPTIONS, allowPositionals: true, strict: true });

/** Runs one registry action; `args` are the words after `crustcore mcp`. */
export async function runRegistryCommand(args: readonly string[], io: Io): Promise<ExitCode> {
  const separator = args.indexOf('--');
  const head = separator < 0 ? args : args.slice(0, separator);
  const command = separator < 0 ? [] : args.slice(separator + 1);
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions(head);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const [action, ...positionals] = parsed.positionals;
  if (!isRegistryAction(action)) throw new UsageError(`expected one of ${MCP_REGISTRY_ACTIONS.join(', ')}`);
  const pack = await import('@crustcore/mcp-gateway');
  const path = pack.registryPath(crustcoreHome(io.env));
  const read = pack.readRegistry(path);
  if (read._tag === 'Left') return fail(io, read.left);
  const context: RegistryContext = {
    pack,
    io,
    path,
    registry: read.right,
    values: parsed.values,
    positionals,
    command,
  };
  switch (action) {
    case 'add':
      return addCommand(context);
    case 'list':
      return listCommand(context);
    case 'remove':
      return removeCommand(context);
    case 'import':
      return importCommand(context);
    case 'approve':
      return approveServer(context);
  }
}

function policyOf(value: string | undefined): 'allow' | 'ask' | 'deny' {
  if (value === undefined) return 'ask';
  if (value === 'allow' || value === 'ask' || value === 'deny') return value;
  throw new UsageError('--policy is allow, ask or deny');
}

function envOf(pairs: readonly string[] | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs ?? []) {
    const split = pair.indexOf('=');
    if (split <= 0) throw new UsageError('--env takes NAME=VALUE');
    env[pair.slice(0, split)] = pair.slice(split + 1);
  }
  return env;
}

function authOf(value: string | undefined): ServerRecord['auth'] {
  if (value === undefined) return undefined;
  const split = value.indexOf('=');
  const handle = value.slice(split + 1);
  if (split <= 0 || !handle.startsWith('secret://'))
    throw new UsageError(
      '--auth takes TARGET=secret://NAME (a vault handle; `crustcore secret set NAME` stores the value)',
    );
  return { target: value.slice(0, split), handle };
}

function timeoutOf(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds < 0.1 || seconds > 3600)
    throw new UsageError('--timeout is 0.1 to 3600 seconds');
  return Math.round(seconds * 1000);
}

function addCommand(context: RegistryContext): ExitCode {
  const { pack, values, io } = context;
  const [name] = context.positionals;
  if (name === undefined || context.positionals.length !== 1)
    throw new UsageError('mcp add NAME (--url URL | -- COMMAND ARG…)');
  const [program, ...programArgs] = context.command;
  if ((values.url === undefined) === (program === undefined))
    throw new UsageError('give exactly one of --url URL or -- COMMAND ARG…');
  const env = envOf(values.env);
  const leaked = pack.checkNoCredential(name, env);
  if (leaked !== null) return fail(io, { _tag: 'CredentialValue', message: leaked });
  const auth = authOf(values.auth);
  const repositories = values['any-repo'] ? ['*'] : (values.repo ?? [io.cwd]).map((dir) => resolve(io.cwd, dir));
  const candidate = {
    name,
    transport:
      program === undefined
        ? { kind: 'http', url: values.url }
        : { kind: 'stdio', command: program, args: programArgs, env },
    trust: 'trusted',
    repositories,
    defaultPolicy: policyOf(values.policy),
    tools: {},
    network: false,
    timeoutMs: timeoutOf(values.timeout, pack.DEFAULT_TIMEOUT_MS),
    source: 'cli',
    ...(auth === undefined ? {} : { auth }),
    ...(values['read-path'] === undefined ? {} : { readPaths: values['read-path'].map((dir) => resolve(io.cwd, dir)) }),
  };
  const decoded = pack.ServerRecordC.decode(candidate);
  if (decoded._tag === 'Left')
    return fail(io, {
      _tag: 'BadRecord',
      message: `${pack.describeDecodeErrors(decoded.left)}; see crustcore mcp --help`,
    });
  const added = pack.addServer(context.registry, decoded.right);
  if (added._tag === 'Left') return fail(io, added.left);
  const code = save(context, added.right);
  if (code === ExitCode.ok)
    writeLine(io.stdout, `added ${name}; no tool is usable until you run: crustcore mcp approve ${name}`);
  return code;
}

function listCommand(context: RegistryContext): ExitCode {
  const { io, registry } = context;
  if (context.values.json) {
    writeLine(io.stdout, JSON.stringify(context.pack.RegistryFileC.encode(registry)));
    return ExitCode.ok;
  }
  if (registry.servers.length === 0) writeLine(io.stdout, 'no MCP servers registered (crustcore mcp add | import)');
  for (const record of registry.servers) {
    const where =
      record.transport.kind === 'http'
        ? record.transport.url
        : [record.transport.command, ...record.transport.args].join(' ');
    const tools = Object.entries(record.tools).map(([tool, pin]) => `${tool}:${pin.policy}`);
    writeLine(io.stdout, `${record.name}  ${record.trust}  ${record.transport.kind}  ${where}`);
    writeLine(
      io.stdout,
      `  repositories: ${record.repositories.join(', ') || '(none)'}${record.auth ? `  auth: ${record.auth.target}=${record.auth.handle}` : ''}`,
    );
    writeLine(io.stdout, `  tools: ${tools.join(', ') || '(none approved)'}`);
  }
  return ExitCode.ok;
}

function removeCommand(context: RegistryContext): ExitCode {
  const [name] = context.positionals;
  if (name === undefined) throw new UsageError('mcp remove NAME');
  const removed = context.pack.removeServer(context.registry, name);
  if (removed._tag === 'Left') return fail(context.io, removed.left);
  const code = save(context, removed.right);
  if (code === ExitCode.ok) writeLine(context.io.stdout, `removed ${name}`);
  return code;
}

function importCommand(context: RegistryContext): ExitCode {
  const { pack, values, io } = context;
  const project = values.project === undefined ? undefined : resolve(io.cwd, values.project);
  const path = project === undefined ? values.from : resolve(project, '.mcp.json');
  if (path === undefined) throw new UsageError('mcp import --project DIR | --from FILE --format mcp-json|claude|codex');
  const format = values.format ?? 'mcp-json';
  if (format !== 'mcp-json' && format !== 'claude' && format !== 'codex')
    throw new UsageError('--format is mcp-json, claude or codex');
  let text: string;
  try {
    text = readText(resolve(io.cwd, path));
  } catch (error) {
    return fail(io, { _tag: 'Io', message: `cannot read ${path}: ${(error as Error).message}` });
  }
  const imported = pack.importConfig(text, { path, format, ...(project === undefined ? {} : { repository: project }) });
  if (imported._tag === 'Left') return fail(io, imported.left);
  let registry = context.registry;
  for (const record of imported.right) {
    const added = pack.addServer(registry, record);
    if (added._tag === 'Left') return fail(io, added.left);
    registry = added.right;
  }
  const code = save(context, registry);
  for (const record of imported.right)
    writeLine(
      io.stdout,
      `imported ${record.name} (untrusted: nothing starts until you run crustcore mcp approve ${record.name})`,
    );
  return code;
}

const readText = (path: string): string => readFileSync(path, 'utf8');
