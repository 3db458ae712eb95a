/**
 * @crustcore/mcp-gateway — the MCP client side: a registry of the user's MCP
 * servers, pinned tool definitions (trust on first use), and the gateway
 * that offers their allowed tools to the native agent through the kernel's
 * tool gate (directly, or from a sandboxed script in code mode). See
 * docs/mcp-gateway.md.
 */

export { STDIO_BRIDGE_PATH } from './bridge-script.js';
export { type SandboxedServerSpec, SandboxedStdioTransport, type ServerExit } from './client/sandboxed-transport.js';
export { type CallOutcome, ServerSession, type SessionStart } from './client/server-session.js';
export { CODE_TOOL, DEFAULT_CODE_TIMEOUT_MS } from './code-mode/code-tool.js';
export { describeDecodeErrors, type GatewayError } from './errors.js';
export type { GatewayCore } from './gateway/gateway-core.js';
export { GATEWAY_DEFAULTS, McpGateway } from './gateway/mcp-gateway.js';
export type { CodeModeOptions, GatewayOptions } from './gateway/mcp-gateway-options.js';
export {
  type GatewaySetup,
  type NativeGatewaySetup,
  registryGatewayFactory,
  workerMcpServers,
} from './gateway/registry-gateway.js';
export { renderResult, type ShapedResult, shapeResult } from './gateway/result-shaping.js';
export {
  callOperation,
  DESCRIBE_TOOL,
  gatewayToolName,
  parseGatewayToolName,
  SEARCH_TOOL,
} from './gateway/tool-names.js';
export {
  approvedTools,
  callThroughGate,
  serveWorkerEndpoint,
  type WorkerEndpoint,
  type WorkerEndpointOptions,
} from './gateway/worker-endpoint.js';
export { canonicalJson } from './pins/canonical-json.js';
export {
  approveTools,
  type CheckedTool,
  checkTool,
  definitionDiff,
  type LiveTool,
  type PinStatus,
} from './pins/pin-check.js';
export { type PinnedDefinition, pinnedDefinition, toolHash } from './pins/tool-hash.js';
export { checkNoCredential } from './registry/credential-check.js';
export { type ConfigFormat, type ImportOptions, importConfig } from './registry/import-config.js';
export {
  addServer,
  emptyRegistry,
  findServer,
  readRegistry,
  registryPath,
  removeServer,
  replaceServer,
  writeRegistry,
} from './registry/registry-store.js';
export {
  type Auth,
  DEFAULT_TIMEOUT_MS,
  type RegistryFile,
  RegistryFileC,
  type ServerRecord,
  ServerRecordC,
  type ToolPin,
  type ToolPolicy,
  type Transport,
  type Trust,
} from './registry/server-record.js';
export { parseTomlSubset, type TomlTable, type TomlValue } from './registry/toml-subset.js';
