/** Environments: dependencies and toolchains for worker and verify runs. See docs/environments.md. */

export { dependencyRisk } from './dependency-risk.js';
export {
  dependencyFiles,
  detectEcosystems,
  type Ecosystem,
  type EcosystemKind,
  type EcosystemReport,
} from './ecosystems.js';
export {
  type EnvironmentError,
  type EnvironmentMode,
  type PreparedEnvironment,
  type PrepareEnvironmentOptions,
  prepareEnvironment,
} from './environment.js';
export { copyExtraFiles, type ExtraFilesReport } from './extra-files.js';
export { DEFAULT_NPM_REGISTRY, userNpmRegistry } from './npm-registry.js';
export { PROGRESS_AFTER_MS, type ProgressEvent, type ProgressSink, withProgress } from './progress.js';
export { ENVIRONMENT_CONFIG_PATH, type EnvironmentConfig, readEnvironmentConfig } from './project-config.js';
export { originOf, type ProxyOrigin, type RegistryProxy, startRegistryProxy } from './registry-proxy.js';
export { type EnvironmentContext, environmentForWorktree, type RunEnvironment } from './run-environment.js';
export { environmentsDir, setupKey } from './setup-cache.js';
export {
  defaultSetupArgv,
  runSetup,
  runSetupSandbox,
  type SetupError,
  type SetupRequest,
  type SetupResult,
  type SetupSandboxResult,
  type SetupSandboxRun,
} from './setup-run.js';
export { resolveToolchain, type Toolchain } from './toolchain.js';
export { commitTree, directoryTree, type TreeReader } from './tree-reader.js';
