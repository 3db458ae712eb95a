/**
 * How each worker CLI is driven: its provider API, the files CrustCore
 * writes into its throwaway HOME, its argv and environment inside the
 * sandbox, and how its event stream reads. Nothing here ever holds a key:
 * the CLIs get a placeholder that only satisfies their "is a key set?"
 * check; the host proxy replaces whatever they send with the real key.
 */
import type { WorkerCliName } from '../cli/locate-cli.js';
import type { ModelWire } from '../proxy/usage.js';
import { readClaudeEvents, readCodexEvents, type WorkerActivity } from './worker-events.js';

/**
 * What a worker CLI sends as its API key. Deliberately not key-shaped (no
 * digits, a fixed word) so the sandbox's secret-value check lets it through
 * and nobody mistakes it for a credential.
 */
export const PLACEHOLDER_API_KEY = 'crustcore-proxy-placeholder-not-a-key';
/** The variable Codex reads its key from (`env_key`); allowed by the worker profile as a placeholder. */
export const CODEX_KEY_VARIABLE = 'CRUSTCORE_MODEL_PROXY_KEY';

/** Run-specific values a spec fills in. */
export interface WorkerSetup {
  /** `http://127.0.0.1:PORT`: the bridge inside the sandbox. */
  readonly modelOrigin: string;
  /** HOME inside the sandbox. */
  readonly home: string;
  /** Model name, or null for the CLI's default. */
  readonly model: string | null;
  /** MCP servers the CLI may use: each a stdio command inside the sandbox (CrustCore's bridge to its gateway). */
  readonly mcpServers: readonly WorkerMcpCommand[];
}

/** How a worker CLI starts one MCP server (its name is the user's registered server's). */
export interface WorkerMcpCommand {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
}

/** Codex's config for each MCP server; tool calls may take as long as the gateway lets them. */
function codexMcpSections(servers: readonly WorkerMcpCommand[]): string[] {
  return servers.flatMap((server) => [
    `[mcp_servers.${server.name}]`,
    `command = ${tomlString(server.command)}`,
    `args = [${server.args.map(tomlString).join(', ')}]`,
    'startup_timeout_sec = 30',
    'tool_timeout_sec = 600',
    '',
  ]);
}

/** Claude Code's `--mcp-config` for the servers (with --strict-mcp-config, the only ones it loads). */
function claudeMcpArguments(servers: readonly WorkerMcpCommand[]): string[] {
  if (servers.length === 0) return [];
  const mcpServers = Object.fromEntries(
    servers.map((server) => [server.name, { type: 'stdio', command: server.command, args: [...server.args] }]),
  );
  return ['--mcp-config', JSON.stringify({ mcpServers })];
}

export interface WorkerCliSpec {
  readonly name: WorkerCliName;
  readonly wire: ModelWire;
  readonly defaultUpstream: string;
  /** API path prefixes the proxy lets through. */
  readonly allowPaths: readonly string[];
  /** Host variable the real key is read from when the caller gives none. */
  readonly keyVariable: string;
  /** Files to create in the throwaway HOME (path relative to HOME → text). */
  readonly homeFiles: (setup: WorkerSetup) => Readonly<Record<string, string>>;
  /** Arguments after the executable. The prompt is never among them: it goes on stdin. */
  readonly arguments: (setup: WorkerSetup) => readonly string[];
  readonly environment: (setup: WorkerSetup) => Readonly<Record<string, string>>;
  readonly readEvents: (stdout: string) => WorkerActivity;
}

/** Model names go into TOML and argv: keep them to a plain shape. */
export const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$/;

/** A TOML basic string (JSON's escapes are a subset TOML accepts for these characters). */
const tomlString = (value: string): string => JSON.stringify(value);

const codexHome = (setup: WorkerSetup): string => `${setup.home}/.codex`;

export const CODEX_SPEC: WorkerCliSpec = {
  name: 'codex',
  wire: 'openai-responses',
  defaultUpstream: 'https://api.openai.com',
  allowPaths: ['/v1/responses'],
  keyVariable: 'OPENAI_API_KEY',
  homeFiles: (setup) => {
    const lines = [
      '# Written by CrustCore for one worker run; the key is injected by the host proxy.',
      ...(setup.model === null ? [] : [`model = ${tomlString(setup.model)}`]),
      'model_provider = "crustcore"',
      'approval_policy = "never"',
      'sandbox_mode = "danger-full-access"',
      '',
      '[model_providers.crustcore]',
      'name = "CrustCore model proxy"',
      `base_url = ${tomlString(`${setup.modelOrigin}/v1`)}`,
      `env_key = ${tomlString(CODEX_KEY_VARIABLE)}`,
      'wire_api = "responses"',
      // Retries are the proxy's and the task loop's business; a CLI retrying a refusal only burns time.
      'request_max_retries = 1',
      'stream_max_retries = 1',
      '',
      '[analytics]',
      'enabled = false',
      '',
      ...codexMcpSections(setup.mcpServers),
    ];
    return { '.codex/config.toml': lines.join('\n') };
  },
  arguments: () => [
    'exec',
    '--json',
    '--skip-git-repo-check',
    '--color',
    'never',
    '--ephemeral',
    '-c',
    'analytics.enabled=false',
    // CrustCore's sandbox is outside; Codex's own would need user namespaces inside ours.
    '--dangerously-bypass-approvals-and-sandbox',
    // `-`: read the prompt from stdin.
    '-',
  ],
  environment: (setup) => ({
    CODEX_HOME: codexHome(setup),
    [CODEX_KEY_VARIABLE]: PLACEHOLDER_API_KEY,
    NO_COLOR: '1',
  }),
  readEvents: readCodexEvents,
};

/** Tools a Claude Code worker may use without asking (it cannot ask: there is nobody to answer). */
const CLAUDE_ALLOWED_TOOLS = ['Bash', 'Edit', 'MultiEdit', 'Write', 'Read', 'Glob', 'Grep', 'TodoWrite'];
/** Tools that would reach the network (server-side search, fetch): denied, the sandbox has none anyway. */
const CLAUDE_DENIED_TOOLS = ['WebFetch', 'WebSearch'];

export const CLAUDE_SPEC: WorkerCliSpec = {
  name: 'claude',
  wire: 'anthropic-messages',
  defaultUpstream: 'https://api.anthropic.com',
  allowPaths: ['/v1/messages'],
  keyVariable: 'ANTHROPIC_API_KEY',
  homeFiles: () => ({}),
  arguments: (setup) => [
    // `-p` without a prompt argument: the prompt is read from stdin.
    '-p',
    '--output-format',
    'stream-json',
    '--verbose',
    // Only CrustCore's (empty) user settings: a repository's .claude/settings.json cannot add hooks or helpers.
    '--setting-sources',
    'user',
    '--strict-mcp-config',
    ...claudeMcpArguments(setup.mcpServers),
    '--no-session-persistence',
    '--permission-prompts',
    'none',
    '--allowedTools',
    // A server's tools without asking: CrustCore's gateway and kernel decide each call.
    [...CLAUDE_ALLOWED_TOOLS, ...setup.mcpServers.map((server) => `mcp__${server.name}`)].join(','),
    '--disallowedTools',
    CLAUDE_DENIED_TOOLS.join(','),
    ...(setup.model === null ? [] : ['--model', setup.model]),
  ],
  environment: (setup) => ({
    ANTHROPIC_BASE_URL: setup.modelOrigin,
    ANTHROPIC_API_KEY: PLACEHOLDER_API_KEY,
    CLAUDE_CONFIG_DIR: `${setup.home}/.claude`,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CLAUDE_CODE_MAX_RETRIES: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    NO_COLOR: '1',
  }),
  readEvents: readClaudeEvents,
};

export const WORKER_CLI_SPECS: Readonly<Record<WorkerCliName, WorkerCliSpec>> = Object.freeze({
  codex: CODEX_SPEC,
  claude: CLAUDE_SPEC,
});
