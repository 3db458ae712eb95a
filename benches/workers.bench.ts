/**
 * Worker adapter overhead (issue #7), excluding model time: the scripted
 * model answers at once.
 *
 * 1. End to end: the same REAL CLI against the same scripted model, run bare
 *    on the host vs through the adapter (throwaway HOME, model proxy and
 *    credential proxy, bubblewrap + bridge, capture, redaction, patch
 *    extraction). Runs are interleaved (bare, adapter, bare, …) and the
 *    overhead is the median of the paired differences, because one CLI run
 *    takes seconds and a busy machine drifts by more than the overhead.
 * 2. The adapter's parts with tinybench, each against its bare baseline in
 *    the same run: sandbox + bridge start, one model request through both
 *    proxies, per-run setup/teardown, and capture (patch extraction,
 *    redaction, event parsing). Their sum is the overhead a run pays.
 *
 *   node --conditions=source --import tsx benches/workers.bench.ts
 *   … benches/workers.bench.ts --runs=9   (end-to-end pairs per CLI, default 5)
 *   … benches/workers.bench.ts --parts-only   (skip the end-to-end pairs)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mintSandboxExecCap, runSandboxed, runTrustedHostCommand } from '@crustcore/sandbox';
import { Redactor, SecretHandle, SecretMaterial } from '@crustcore/secrets';
import { extractPatch } from '@crustcore/verify';
import { Bench } from 'tinybench';
import {
  BRIDGE_SCRIPT_PATH,
  boundedModelBudget,
  CLAUDE_SPEC,
  ClaudeBackend,
  CODEX_SPEC,
  CodexBackend,
  locateWorkerCli,
  priceTable,
  readCodexEvents,
  SANDBOX_LAYOUT,
  startModelProxy,
  type WorkerCliName,
  workerPrompt,
} from '../packages/workers/src/index.js';
import { type ScriptStep, startScriptedModel } from '../packages/workers/test/scripted-model.js';
import {
  capability,
  FAILING_NODE_PROJECT,
  makeWorkspace,
  TEST_API_KEY,
  workerInput,
} from '../packages/workers/test/worker-harness.js';

const pairs = Number(process.argv.find((arg) => arg.startsWith('--runs='))?.slice('--runs='.length) ?? '5');
const steps: readonly ScriptStep[] = [
  { kind: 'shell', command: 'echo bench' },
  { kind: 'message', text: 'done {"done":true}' },
];
const keyResult = SecretMaterial.fromText(TEST_API_KEY);
if (keyResult._tag === 'Left') throw new Error('key');
const key = keyResult.right;
const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

// ─── 1. end to end, paired ─────────────────────────────────────────────────

interface EndToEnd {
  readonly cli: WorkerCliName;
  readonly bareMs: number;
  readonly adapterMs: number;
  readonly overheadMs: number;
  readonly overheadSpreadMs: readonly [number, number];
}

async function endToEnd(name: WorkerCliName): Promise<EndToEnd> {
  const located = locateWorkerCli(name);
  if (located._tag === 'Left') throw new Error(`${located.left.message}: ${located.left.fix}`);
  const cli = located.right;
  const spec = name === 'codex' ? CODEX_SPEC : CLAUDE_SPEC;
  const model = await startScriptedModel(spec.wire, steps);
  const workspace = await makeWorkspace(`bench-${name}`, FAILING_NODE_PROJECT);
  const scratch = mkdtempSync(join(tmpdir(), 'cc-workers-bench-'));
  const input = workerInput(`bench-${name}`, { maxSeconds: 120 });
  const prompt = workerPrompt(input, workspace.worktree.path);
  const bareHome = join(scratch, 'home');
  const setup = { modelOrigin: model.origin, home: bareHome, model: null, mcpServers: [] };
  const bare = async (): Promise<number> => {
    rmSync(bareHome, { recursive: true, force: true });
    mkdirSync(bareHome, { recursive: true });
    for (const [relative, text] of Object.entries(spec.homeFiles(setup))) {
      mkdirSync(join(bareHome, relative, '..'), { recursive: true });
      writeFileSync(join(bareHome, relative), text);
    }
    const started = performance.now();
    const result = await runTrustedHostCommand({
      argv: [cli.executable, ...spec.arguments(setup)],
      cwd: workspace.worktree.path,
      env: { ...spec.environment(setup), PATH: '/usr/local/bin:/usr/bin:/bin', HOME: bareHome },
      stdin: prompt,
      timeoutMs: 120_000,
      maxOutputBytes: 4 * 1024 * 1024,
    });
    if (result.exitCode !== 0) throw new Error(`bare ${name} failed: ${result.stderr.text.slice(-500)}`);
    return performance.now() - started;
  };
  const options = { workerCap: capability('worker'), apiKey: key, upstream: model.origin, cli };
  const adapter = name === 'codex' ? new CodexBackend(options) : new ClaudeBackend(options);
  const viaAdapter = async (): Promise<number> => {
    const started = performance.now();
    const result = await adapter.run(input, { worktree: workspace.worktree, home: workspace.home });
    if (result.exit.exitCode !== 0 || result.failure !== null) {
      throw new Error(`adapter ${name} failed: ${result.failure ?? result.transcript.stderrText.slice(-500)}`);
    }
    return performance.now() - started;
  };
  try {
    await bare();
    await viaAdapter();
    const bareTimes: number[] = [];
    const adapterTimes: number[] = [];
    for (let index = 0; index < pairs; index += 1) {
      bareTimes.push(await bare());
      adapterTimes.push(await viaAdapter());
    }
    const differences = adapterTimes.map((time, index) => time - (bareTimes[index] as number));
    return {
      cli: name,
      bareMs: median(bareTimes),
      adapterMs: median(adapterTimes),
      overheadMs: median(differences),
      overheadSpreadMs: [Math.min(...differences), Math.max(...differences)],
    };
  } finally {
    await model.close();
    await workspace.cleanup();
    rmSync(scratch, { recursive: true, force: true });
  }
}

// ─── 2. the parts ──────────────────────────────────────────────────────────

interface Part {
  readonly part: string;
  readonly bareMs: number;
  readonly adapterMs: number;
}

async function parts(): Promise<Part[]> {
  const workspace = await makeWorkspace('bench-parts', FAILING_NODE_PROJECT);
  const model = await startScriptedModel('openai-responses', steps);
  const scratch = mkdtempSync(join(tmpdir(), 'cc-workers-bench-parts-'));
  const modelDirectory = join(scratch, 'model');
  const keyDirectory = join(scratch, 'key');
  const home = join(scratch, 'home');
  for (const directory of [modelDirectory, keyDirectory, home]) mkdirSync(directory);
  const handle = SecretHandle.create('bench-key');
  if (handle._tag === 'Left') throw new Error('handle');
  const redactor = new Redactor({ detectors: [] });
  redactor.register(handle.right, key);
  const proxyOptions = {
    wire: 'openai-responses' as const,
    upstream: model.origin,
    apiKey: key,
    allowPaths: ['/v1/responses'],
    responseRedactor: redactor,
    maxRequests: 1_000_000,
  };
  const proxy = await startModelProxy({
    ...proxyOptions,
    workerSocketPath: join(modelDirectory, 'model.sock'),
    keySocketPath: join(keyDirectory, 'key.sock'),
  });
  if (proxy._tag === 'Left') throw new Error(proxy.left.message);
  // The same meter with a token and cost budget and a price table: every request reserves, then settles.
  mkdirSync(join(scratch, 'reserving'));
  mkdirSync(join(scratch, 'reserving-key'));
  const reserving = await startModelProxy({
    ...proxyOptions,
    workerSocketPath: join(scratch, 'reserving', 'model.sock'),
    keySocketPath: join(scratch, 'reserving-key', 'key.sock'),
    budget: boundedModelBudget({ maxTokens: Number.MAX_SAFE_INTEGER, maxCostUsd: 1e12 }),
    pricing: priceTable([['m', { inputUsdPerMillion: 1, outputUsdPerMillion: 10 }]]),
  });
  if (reserving._tag === 'Left') throw new Error(reserving.left.message);
  const cli = locateWorkerCli('codex');
  if (cli._tag === 'Left') throw new Error(cli.left.message);
  const cap = mintSandboxExecCap('worker', {
    extraBinds: [
      { source: home, target: '/home/sandbox', mode: 'read-write' },
      { source: modelDirectory, target: SANDBOX_LAYOUT.modelDirectory, mode: 'read-only' },
      { source: BRIDGE_SCRIPT_PATH, target: SANDBOX_LAYOUT.bridge, mode: 'read-only' },
      { source: cli.right.mountSource, target: SANDBOX_LAYOUT.cli, mode: 'read-only' },
    ],
  });
  if (cap._tag === 'Left') throw new Error(cap.left.message);
  // A request body the size the CLIs send (~60 KB of instructions and tools).
  const body = JSON.stringify({ model: 'm', stream: true, input: [{ type: 'message', text: 'x'.repeat(60_000) }] });
  const post = (target: { socketPath: string } | { port: number }, hostHeader = '127.0.0.1'): Promise<void> =>
    new Promise((resolve, reject) => {
      const headers = { host: hostHeader, 'content-type': 'application/json' };
      const req = request({ ...target, method: 'POST', path: '/v1/responses', headers }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end(body);
    });
  const modelPort = Number(new URL(model.origin).port);
  const transcript = `${'{"type":"item.completed","item":{"type":"agent_message","text":"hello world"}}\n'.repeat(1500)}`;
  const bench = new Bench({ iterations: 20, time: 0, warmupIterations: 2, warmupTime: 0, throws: true });
  bench
    .add('bare: spawn /bin/true', async () => {
      await runTrustedHostCommand({
        argv: ['/bin/true'],
        cwd: scratch,
        env: {},
        timeoutMs: 30_000,
        maxOutputBytes: 1024,
      });
    })
    .add('adapter: sandbox → /bin/true', async () => {
      const result = await runSandboxed(cap.right, {
        argv: ['/bin/true'],
        worktreeRoot: workspace.worktree.path,
        cwd: workspace.worktree.path,
        timeoutMs: 30_000,
      });
      if (result._tag === 'Left' || result.right.exitCode !== 0) throw new Error('sandboxed /bin/true failed');
    })
    .add('adapter: sandbox + bridge → /bin/true', async () => {
      const result = await runSandboxed(cap.right, {
        argv: [
          process.execPath,
          SANDBOX_LAYOUT.bridge,
          '--listen',
          `127.0.0.1:${SANDBOX_LAYOUT.bridgePort}`,
          '--socket',
          SANDBOX_LAYOUT.modelSocket,
          '--',
          '/bin/true',
        ],
        worktreeRoot: workspace.worktree.path,
        cwd: workspace.worktree.path,
        timeoutMs: 30_000,
      });
      if (result._tag === 'Left' || result.right.exitCode !== 0) throw new Error('sandboxed bridge failed');
    })
    .add('bare: model request straight to the provider', () => post({ port: modelPort }))
    .add('adapter: model request through meter + credential proxy', () =>
      post({ socketPath: join(modelDirectory, 'model.sock') }),
    )
    .add('bare: model request through the credential proxy alone', () =>
      post({ socketPath: join(keyDirectory, 'key.sock') }, 'localhost'),
    )
    .add('adapter: model request through reserving meter + credential proxy', () =>
      post({ socketPath: join(scratch, 'reserving', 'model.sock') }),
    )
    .add('bare: no per-run setup', () => undefined)
    .add('adapter: per-run setup + teardown (HOME, proxies)', async () => {
      const runScratch = mkdtempSync(join(tmpdir(), 'cc-workers-bench-setup-'));
      for (const directory of ['home', 'model', 'key']) mkdirSync(join(runScratch, directory));
      writeFileSync(join(runScratch, 'home', 'config.toml'), 'model_provider = "crustcore"\n');
      const started = await startModelProxy({
        ...proxyOptions,
        workerSocketPath: join(runScratch, 'model', 'model.sock'),
        keySocketPath: join(runScratch, 'key', 'key.sock'),
      });
      if (started._tag === 'Left') throw new Error(started.left.message);
      await started.right.close();
      rmSync(runScratch, { recursive: true, force: true });
    })
    .add('bare: no capture', () => undefined)
    .add('adapter: capture (extract patch, redact, read events)', async () => {
      const extracted = await extractPatch(workspace.worktree, { home: workspace.home });
      if (extracted._tag === 'Left') throw new Error('extract failed');
      readCodexEvents(redactor.redactText(transcript));
    });
  await bench.run();
  const p50 = (name: string): number => {
    const result = bench.getTask(name)?.result;
    if (result === undefined || !('latency' in result)) throw new Error(`no result for ${name}`);
    return result.latency.p50 ?? result.latency.mean;
  };
  const rows: Part[] = [
    {
      part: 'sandbox start (bwrap, prlimit, pids cgroup, 4 binds)',
      bareMs: p50('bare: spawn /bin/true'),
      adapterMs: p50('adapter: sandbox → /bin/true'),
    },
    {
      part: 'bridge start (node, in the sandbox)',
      bareMs: p50('adapter: sandbox → /bin/true'),
      adapterMs: p50('adapter: sandbox + bridge → /bin/true'),
    },
    {
      part: 'one model request (60 KB)',
      bareMs: p50('bare: model request straight to the provider'),
      adapterMs: p50('adapter: model request through meter + credential proxy'),
    },
    {
      part: 'meter with reservation (vs the credential proxy alone)',
      bareMs: p50('bare: model request through the credential proxy alone'),
      adapterMs: p50('adapter: model request through reserving meter + credential proxy'),
    },
    {
      part: 'reservation (vs the same meter without a budget)',
      bareMs: p50('adapter: model request through meter + credential proxy'),
      adapterMs: p50('adapter: model request through reserving meter + credential proxy'),
    },
    {
      part: 'per-run setup + teardown',
      bareMs: p50('bare: no per-run setup'),
      adapterMs: p50('adapter: per-run setup + teardown (HOME, proxies)'),
    },
    {
      part: 'capture',
      bareMs: p50('bare: no capture'),
      adapterMs: p50('adapter: capture (extract patch, redact, read events)'),
    },
  ];
  await proxy.right.close();
  await reserving.right.close();
  await model.close();
  await workspace.cleanup();
  rmSync(scratch, { recursive: true, force: true });
  return rows;
}

const partRows = await parts();
console.log('\n## worker adapter parts (tinybench p50, 20 iterations each)');
console.table(
  partRows.map((row) => ({
    part: row.part,
    'bare p50 (ms)': row.bareMs.toFixed(2),
    'adapter p50 (ms)': row.adapterMs.toFixed(2),
    'overhead (ms)': (row.adapterMs - row.bareMs).toFixed(2),
  })),
);
for (const row of partRows.filter((part) => part.part.startsWith('meter') || part.part.startsWith('reservation'))) {
  console.log(`ratio ${row.part}: ${(row.adapterMs / row.bareMs).toFixed(2)}×`);
}
const requestsPerRun = 2;
// The two comparison rows are views of the request row, not further parts of a run.
const fixed = partRows
  .filter((row) => !row.part.startsWith('meter') && !row.part.startsWith('reservation'))
  .reduce(
    (sum, row) => sum + (row.adapterMs - row.bareMs) * (row.part.startsWith('one model request') ? requestsPerRun : 1),
    0,
  );
console.log(`adapter overhead from its parts, per run with ${requestsPerRun} model requests: ${fixed.toFixed(0)} ms`);

const endRows: EndToEnd[] = [];
// --parts-only: skip the end-to-end CLI pairs (minutes on a busy machine).
const partsOnly = process.argv.includes('--parts-only');
for (const name of partsOnly ? [] : (['codex', 'claude'] as const)) endRows.push(await endToEnd(name));
console.log(`\n## end to end: real CLI, scripted model (2 requests, 1 command), ${pairs} interleaved pairs`);
console.table(
  endRows.map((row) => ({
    cli: row.cli,
    'bare p50 (ms)': row.bareMs.toFixed(0),
    'adapter p50 (ms)': row.adapterMs.toFixed(0),
    'overhead median of pairs (ms)': row.overheadMs.toFixed(0),
    'overhead min..max (ms)': `${row.overheadSpreadMs[0].toFixed(0)}..${row.overheadSpreadMs[1].toFixed(0)}`,
  })),
);
for (const row of endRows) {
  console.log(
    `ratio ${row.cli} adapter/bare: ${(row.adapterMs / row.bareMs).toFixed(2)}× — overhead ${row.overheadMs.toFixed(0)} ms per run (median of paired differences)`,
  );
}
