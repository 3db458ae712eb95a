/**
 * What the meta-tools and tool calls need of the gateway (McpGateway
 * implements it); a module of its own so they do not import the class.
 */

import type { ServerSession } from '../client/server-session.js';
import type { CheckedTool } from '../pins/pin-check.js';
import type { ServerRecord } from '../registry/server-record.js';
import type { GatewayOptions } from './mcp-gateway-options.js';

export interface GatewayCore {
  readonly options: GatewayOptions;
  /** Registered servers this task may use (trusted, allowed for its repository). */
  usableServers(): readonly ServerRecord[];
  /** The latest record of a usable server. */
  record(server: string): ServerRecord | undefined;
  /** The server's session if it is running now (no start, no wait); null otherwise. */
  running(server: string): ServerSession | null;
  /** The running session of a server, started on first use; a string says why there is none. */
  session(server: string): Promise<ServerSession | string>;
  /** Marks a tool loaded; returns its model name. */
  load(server: string, checked: CheckedTool): string;
  unload(server: string, tool: string): void;
}
