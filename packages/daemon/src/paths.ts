/**
 * Where the daemon and the MCP server keep their local state:
 *   <state-dir>            default $CRUSTCORE_HOME/daemon (daemon) or $CRUSTCORE_HOME/mcp (MCP server); 0700
 *     admin.sock           the daemon's admin socket (0600)
 *     pglite/              the embedded database when no --database-url is given (locked by one process)
 *     sockets/<pid>.sock   each MCP server's admin socket (0600), for `crustcore mcp-token`
 *     tasks/<task>.json    MCP task metadata (repository, base commit, verify argv)
 */
import { isAbsolute, join, resolve } from 'node:path';

export const daemonStateDir = (home: string, override: string | undefined, cwd: string): string =>
  override === undefined ? join(home, 'daemon') : isAbsolute(override) ? override : resolve(cwd, override);

export const mcpStateDir = (home: string, override: string | undefined, cwd: string): string =>
  override === undefined ? join(home, 'mcp') : isAbsolute(override) ? override : resolve(cwd, override);

export const adminSocketPath = (stateDir: string): string => join(stateDir, 'admin.sock');

export const pgliteDataDir = (stateDir: string): string => join(stateDir, 'pglite');

export const mcpSocketDir = (stateDir: string): string => join(stateDir, 'sockets');
