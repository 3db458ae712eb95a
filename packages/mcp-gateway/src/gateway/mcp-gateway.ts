/**
 * The gateway: the user's MCP servers offered to the native agent as tools
 * that go through the kernel's tool gate. Zero cost until asked: the model
 * starts with two meta-tools only — `mcp_search` lists what is registered
 * from the registry's pins (no server starts), `mcp_describe` starts one
 * server and loads one tool's schema — and only then does that tool join the
 * model's definitions as `mcp__SERVER__TOOL`. With code mode (the task's
 * gate and sandbox given), a third meta-tool, `mcp_code`, runs a script
 * against typed stubs of the approved tools (src/code-mode/).
 *
 * The gateway holds the credentials (resolved from the vault when a server
 * starts, registered with the redactor at once), never the model or the
 * ledger: results are redacted, bounded and wrapped as untrusted data.
 */
import type { ExtraToolPlanned, ExtraTools } from '@crustcore/agent';
import type { ToolDefinition } from '@crustcore/net';
import { parseSecretReference } from '@crustcore/secrets';
import { type ServerSession, ServerSession as Session } from '../client/server-session.js';
import { CODE_TOOL, codePlan } from '../code-mode/code-tool.js';
import { serverStubs } from '../code-mode/stubs.js';
import type { CheckedTool } from '../pins/pin-check.js';
import type { ServerRecord } from '../registry/server-record.js';
import { callPlan } from './call-plan.js';
import type { GatewayCore } from './gateway-core.js';
import type { GatewayOptions } from './mcp-gateway-options.js';

export { GATEWAY_DEFAULTS } from './mcp-gateway-options.js';

import { metaDefinitions } from './meta-definitions.js';
import { describeTool, searchServers } from './meta-tools.js';
import { DESCRIBE_TOOL, gatewayToolName, metaOperation, parseGatewayToolName, SEARCH_TOOL } from './tool-names.js';

const usableIn = (record: ServerRecord, repository: string): boolean =>
  record.trust === 'trusted' && (record.repositories.includes('*') || record.repositories.includes(repository));

export class McpGateway implements ExtraTools, GatewayCore {
  readonly #options: GatewayOptions;
  readonly #sessions = new Map<string, Promise<ServerSession | string>>();
  /** Sessions that started, for the per-call path: a running server's session without a promise hop. */
  readonly #started = new Map<string, ServerSession>();
  /** Tools the model loaded with mcp_describe: model name → definition. */
  readonly #loaded = new Map<string, ToolDefinition>();
  #closed = false;

  constructor(options: GatewayOptions) {
    this.#options = options;
  }

  get options(): GatewayOptions {
    return this.#options;
  }

  definitions(): readonly ToolDefinition[] {
    return [...metaDefinitions(this.#options.codeMode !== undefined), ...this.#loaded.values()];
  }

  /** Registered servers this task may use (trusted, allowed for its repository). */
  usableServers(): readonly ServerRecord[] {
    return this.#options.registry().servers.filter((record) => usableIn(record, this.#options.repository));
  }

  plan(name: string, args: unknown): ExtraToolPlanned | null {
    const object =
      typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : null;
    if (name === SEARCH_TOOL) {
      const query = typeof object?.query === 'string' ? object.query : '';
      return {
        kind: 'plan',
        plan: { operation: metaOperation(['search']), readOnly: true, execute: async () => searchServers(this, query) },
      };
    }
    if (name === DESCRIBE_TOOL) return this.#describePlan(object);
    const codeMode = this.#options.codeMode;
    if (name === CODE_TOOL) return codeMode === undefined ? null : codePlan(this, codeMode, args);
    const parts = parseGatewayToolName(name);
    if (parts === null) return null;
    if (!this.#loaded.has(name))
      return { kind: 'invalid', message: `${name} is not loaded; call mcp_describe with its server and tool first` };
    return callPlan(this, parts.server, parts.tool, object);
  }

  /** `mcp_describe {server, tool}` loads a tool; with code mode, `{server}` alone gives its stubs (starts nothing). */
  #describePlan(object: Record<string, unknown> | null): ExtraToolPlanned {
    const server = object?.server;
    const tool = object?.tool;
    const stubsOnly = this.#options.codeMode !== undefined && typeof server === 'string' && tool === undefined;
    if (stubsOnly)
      return {
        kind: 'plan',
        plan: {
          // Four words like a tool's describe: three (`mcp describe X`) would read as a call of tool X on a server named `describe`.
          operation: metaOperation(['describe', server.slice(0, 64), '(stubs)']),
          readOnly: true,
          execute: async () => serverStubs(this, server),
        },
      };
    if (typeof server !== 'string' || typeof tool !== 'string')
      return { kind: 'invalid', message: 'mcp_describe needs {"server": NAME, "tool": NAME}' };
    return {
      kind: 'plan',
      plan: {
        operation: metaOperation(['describe', server.slice(0, 64), tool.slice(0, 128)]),
        readOnly: true,
        execute: async () => describeTool(this, server, tool),
      },
    };
  }

  /** Marks a tool loaded (mcp_describe found it approved). */
  load(server: string, checked: CheckedTool): string {
    const name = gatewayToolName(server, checked.tool.name);
    this.#loaded.set(name, {
      name,
      description: checked.definition.description.slice(0, 2_000),
      parameters: (checked.definition.inputSchema ?? { type: 'object' }) as ToolDefinition['parameters'],
    });
    return name;
  }

  /** Unloads a tool whose definition is no longer the approved one. */
  unload(server: string, tool: string): void {
    this.#loaded.delete(gatewayToolName(server, tool));
  }

  running(server: string): ServerSession | null {
    const started = this.#started.get(server);
    return started === undefined || started.closed || this.#closed ? null : started;
  }

  /** The running session of a server, started on first use; a string says why there is none. */
  session(server: string): Promise<ServerSession | string> {
    if (this.#closed) return Promise.resolve('the gateway is closed: the task has ended');
    const running = this.#sessions.get(server);
    // The promise is stored before anything is awaited: calls that arrive together share one start.
    const next = (running ?? Promise.resolve(null)).then((session) => {
      if (session !== null && (typeof session === 'string' || !session.closed)) return session;
      if (this.#closed) return 'the gateway is closed: the task has ended';
      if (session !== null && this.#options.restart === false)
        return `the ${server} server stopped and is not started again during this run`;
      return this.#start(server);
    });
    this.#sessions.set(server, next);
    return next;
  }

  async #start(server: string): Promise<ServerSession | string> {
    const record = this.record(server);
    if (record === undefined)
      return `no usable MCP server named ${JSON.stringify(server.slice(0, 64))} (mcp_search lists them)`;
    const credential = await this.#credential(record);
    if (typeof credential === 'object' && credential !== null) return credential.problem;
    this.#options.onStart?.(server);
    const opened = await Session.open({
      record,
      credential,
      worktree: this.#options.worktree,
      repository: this.#options.repository,
    });
    if (opened._tag === 'Left') return this.#options.redactor.redactText(opened.left.message);
    this.#started.set(server, opened.right);
    return opened.right;
  }

  async #credential(record: ServerRecord): Promise<string | null | { readonly problem: string }> {
    if (record.auth === undefined) return null;
    const handle = parseSecretReference(record.auth.handle);
    const secrets = this.#options.secrets;
    if (handle._tag === 'Left' || secrets === null)
      return { problem: `server ${record.name}'s credential ${record.auth.handle} is not available (open the vault)` };
    const material = await secrets.get(handle.right);
    if (material._tag === 'Left')
      return { problem: `server ${record.name}'s credential ${record.auth.handle} is not in the vault` };
    // Registered before anything of the server is seen, so no result can carry it unredacted.
    this.#options.redactor.register(handle.right, material.right);
    return material.right.expose();
  }

  /** The latest record of a server (a person may have approved it while the task runs). */
  record(server: string): ServerRecord | undefined {
    // One pass, no filtered copy of the registry: this runs twice per call.
    for (const candidate of this.#options.registry().servers)
      if (candidate.name === server && usableIn(candidate, this.#options.repository)) return candidate;
    return undefined;
  }

  /**
   * Stops every server, each on its own: a start that failed (its caller was told) or a close that
   * throws must not leave the others running. Throws the first close failure, after all were tried.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    this.#started.clear();
    const closed = await Promise.allSettled(
      sessions.map(async (pending) => {
        const session = await pending.catch(() => 'did not start');
        if (typeof session !== 'string') await session.close();
      }),
    );
    const failed = closed.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  }
}
