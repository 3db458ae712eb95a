/**
 * Dependency rules from DESIGN.md §3, checked in the test command.
 * The kernel stays pure; only the sandbox runner spawns processes; packs use
 * each other's public API only; no cycles.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'kernel-is-pure',
      comment: 'The kernel imports no node: module (no I/O, clock or randomness source).',
      severity: 'error',
      from: { path: '^packages/kernel/src' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'kernel-allowed-deps',
      comment: 'The kernel may depend on fp-ts and io-ts only (it carries its own SHA-256).',
      severity: 'error',
      from: { path: '^packages/kernel/src' },
      to: {
        dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'],
        pathNot: 'node_modules/(fp-ts|io-ts)/',
      },
    },
    {
      name: 'kernel-imports-no-workspace-package',
      severity: 'error',
      from: { path: '^packages/kernel/src' },
      to: { path: '^packages/(?!kernel/)' },
    },
    {
      name: 'safe-text-is-a-leaf',
      comment:
        'The character table and terminal guard import nothing (no node: module, no package): the CLI loads them at start-up, before any command, so they must not pull the verifier or a pack in.',
      severity: 'error',
      from: { path: '^packages/safe-text/src' },
      to: { pathNot: '^packages/safe-text/src/' },
    },
    {
      name: 'only-the-runner-spawns',
      comment:
        'Only the sandbox process runner may import node:child_process. The exceptions are the workers bridge, the verify setup bridge and the MCP gateway stdio bridge, plain scripts that run only INSIDE a sandbox (they start the CLI or the setup command there).',
      severity: 'error',
      from: {
        path: '^packages/',
        pathNot:
          '^packages/sandbox/src/runner/|^packages/workers/assets/bridge\\.mjs$|^packages/verify/assets/setup-bridge\\.mjs$|^packages/mcp-gateway/assets/stdio-bridge\\.mjs$',
      },
      to: { path: '^(node:)?child_process$' },
    },
    {
      name: 'no-deep-imports-across-packages',
      comment:
        "Packages talk through each other's src/index.ts, or a subpath entry their package.json exports (@crustcore/sandbox/descriptors).",
      severity: 'error',
      from: { path: '^packages/([^/]+)/' },
      to: {
        path: '^packages/([^/]+)/src/(?!index\\.ts$)',
        pathNot: '^packages/$1/|^packages/sandbox/src/descriptors\\.ts$',
      },
    },
    {
      name: 'core-never-imports-packs',
      comment: 'kernel, ledger, confine, sandbox and verify never import a pack.',
      severity: 'error',
      from: { path: '^packages/(kernel|ledger|confine|sandbox|verify)/src' },
      to: { path: '^packages/(net|agent|workers|state|mcp|crustcore|runtime|daemon|index)/' },
    },
    {
      name: 'runtime-uses-no-pack-code',
      comment:
        'The runtime is the spine every surface drives: it may read the agent tool-gate contract (types only) and load the secrets pack lazily for redaction, nothing else of the packs.',
      severity: 'error',
      from: { path: '^packages/runtime/src' },
      to: {
        path: '^packages/(net|workers|state|mcp|crustcore|daemon)/',
      },
    },
    {
      name: 'only-the-cli-hosts-the-daemon',
      comment:
        'The daemon is a surface on top of the runtime: only the CLI (which parses arguments and renders replies) imports it.',
      severity: 'error',
      from: { path: '^packages/(?!crustcore/|daemon/)' },
      to: { path: '^packages/daemon/' },
    },
    {
      name: 'daemon-uses-no-pack-code',
      comment:
        'The daemon drives tasks through the runtime and the state plane; pack backends (agent, workers, mcp) reach it only as a loader the CLI passes in.',
      severity: 'error',
      from: { path: '^packages/daemon/src' },
      to: { path: '^packages/(net|agent|workers|mcp|crustcore|secrets|sandbox|confine)/' },
    },
    {
      name: 'packs-never-import-the-cli',
      severity: 'error',
      from: { path: '^packages/(?!crustcore/)' },
      to: { path: '^packages/crustcore/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|test)/|\\.config\\.ts$' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    combinedDependencies: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['source', 'import', 'default'],
      extensions: ['.ts', '.js'],
    },
  },
};
