/**
 * `crustcore run --backend codex|claude` as a user runs it: the CLI, the real
 * worker CLI from npm in the worker sandbox, its model requests through the
 * metering and credential proxies to a scripted provider on 127.0.0.1, then
 * sandboxed verify, approval and apply. The API key is in the CLI's
 * environment only; afterwards it must be in no file CrustCore wrote.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FileVault, SecretHandle, SecretMaterial } from '@crustcore/secrets';
import { afterAll, describe, expect, it } from 'vitest';
import type { WorkerCliName } from '../packages/workers/src/index.js';
import { startScriptedModel } from '../packages/workers/test/scripted-model.js';
import { filesContaining, readTree, requireCli, TEST_API_KEY } from '../packages/workers/test/worker-harness.js';
import { makeRepo, NODE_REPO } from './cli-harness.js';
import { baseEnv, cli, cliAsync } from './daemon-harness.js';
import { CLIS, DONE, FIX_ADD, WIRE, workerEnv } from './worker-cli-harness.js';

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** `crustcore run --backend NAME` on the sample repository, approving by policy. */
const runWorker = (name: WorkerCliName, repo: string, env: NodeJS.ProcessEnv, extra: readonly string[] = []) =>
  cliAsync(env, [
    'run',
    '--dir',
    repo,
    '--goal',
    'make add() add',
    '--backend',
    name,
    '--approve',
    'auto',
    '--json',
    ...extra,
  ]);

describe.each(CLIS)('golden: crustcore run --backend %s (the real CLI)', (name) => {
  it('fixes a failing test: verified, applied, every model request metered and in the ledger, the key nowhere', async () => {
    requireCli(name);
    const model = await startScriptedModel(WIRE[name], [
      { kind: 'shell', command: FIX_ADD },
      { kind: 'message', text: DONE },
    ]);
    const box = makeRepo(NODE_REPO);
    roots.push(box.root);
    // A registry that prices the scripted model, so the worker's cost is charged to the task budget.
    const registry = join(box.root, 'models.json');
    writeFileSync(
      registry,
      JSON.stringify({
        version: 1,
        providers: [
          {
            id: 'scripted',
            kind: 'openai-responses',
            baseUrl: model.origin,
            models: [
              // High enough that a turn's cost is visible, low enough that a request's worst case (the
              // CLI's output cap at this price) fits the kernel's default $20 cost budget it is reserved against.
              { id: 'scripted', prices: { inputPerMillion: 50, outputPerMillion: 50 }, roles: ['implement'] },
            ],
          },
        ],
      }),
    );
    const env = workerEnv(name, box.home, model.origin);
    try {
      const run = await runWorker(name, box.repo, env, ['--models-config', registry]);
      expect(run.status, run.stdout + run.stderr).toBe(0);
      expect(run.json).toMatchObject({ outcome: 'completed', attempts: 1 });
      expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toContain('a + b');

      // The provider saw the real key, injected by the proxy, on every request.
      expect(model.requests.length).toBeGreaterThanOrEqual(2);
      const header = name === 'codex' ? 'authorization' : 'x-api-key';
      for (const request of model.requests)
        expect(request.headers[header]).toBe(name === 'codex' ? `Bearer ${TEST_API_KEY}` : TEST_API_KEY);

      // The ledger is intact, replays, and records each model request the worker made.
      const stateDir = String(run.json?.stateDir);
      const inspect = cli(env, ['inspect', '--dir', stateDir, '--replay']);
      expect(inspect.status, inspect.stdout + inspect.stderr).toBe(0);
      const exported = cli(env, ['export', '--dir', stateDir, '--format', 'jsonl']);
      const kinds = exported.stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { kind: string }).kind);
      expect(kinds.filter((kind) => kind === 'note.model.request')).toHaveLength(model.requests.length);
      // Each metered response was priced by the model it named and charged to the kernel's cost budget.
      const turns = exported.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { kind: string; payload?: { costMicros?: number } })
        .filter((frame) => frame.kind === 'ModelOutputReceived');
      expect(turns.length).toBeGreaterThanOrEqual(1);
      for (const turn of turns) expect(turn.payload?.costMicros).toBeGreaterThan(0);
      // --json reports the task's totals from those same charges (docs/headless.md).
      const charged = turns.map(
        (turn) => turn.payload as { inputTokens: number; outputTokens: number; costMicros: number },
      );
      const sum = (key: 'inputTokens' | 'outputTokens' | 'costMicros') => charged.reduce((n, turn) => n + turn[key], 0);
      expect(run.json?.usage).toEqual({
        inputTokens: sum('inputTokens'),
        outputTokens: sum('outputTokens'),
        modelTurns: turns.length,
      });
      expect(run.json?.costUsd).toBeCloseTo(sum('costMicros') / 1_000_000, 9);

      // The key is in no output and in no file under CRUSTCORE_HOME or the repository.
      expect(run.stdout + run.stderr + exported.stdout).not.toContain(TEST_API_KEY);
      expect(filesContaining(readTree(box.home), TEST_API_KEY)).toEqual([]);
      expect(filesContaining(readTree(box.repo), TEST_API_KEY)).toEqual([]);
    } finally {
      await model.close();
    }
  }, 240_000);
});

describe.each(CLIS)('golden: the real %s CLI claims success without fixing, through crustcore run', (name) => {
  it('its claim has no authority: not verified, exit 1, the tree untouched', async () => {
    requireCli(name);
    const model = await startScriptedModel(WIRE[name], [{ kind: 'message', text: DONE }]);
    const box = makeRepo(NODE_REPO);
    roots.push(box.root);
    try {
      const run = await runWorker(name, box.repo, workerEnv(name, box.home, model.origin), ['--max-revisits', '0']);
      expect(run.status, run.stdout + run.stderr).toBe(1);
      expect(run.json).toMatchObject({ outcome: 'verify-failed' });
      expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toBe(NODE_REPO['src/math.js']);
    } finally {
      await model.close();
    }
  }, 240_000);
});

describe('golden: crustcore run --backend codex with the key in the vault, not the environment', () => {
  it('takes OPENAI_API_KEY from the vault (key file), and the provider sees it in the header', async () => {
    requireCli('codex');
    const model = await startScriptedModel('openai-responses', [
      { kind: 'shell', command: FIX_ADD },
      { kind: 'message', text: DONE },
    ]);
    const box = makeRepo(NODE_REPO);
    roots.push(box.root);
    const keyFile = join(box.root, 'vault.key');
    const vault = await FileVault.open({
      path: join(box.home, 'vault'),
      key: { kind: 'key-file', path: keyFile, createIfMissing: true },
    });
    const handle = SecretHandle.create('OPENAI_API_KEY');
    const material = SecretMaterial.fromText(TEST_API_KEY);
    if (vault._tag === 'Left' || handle._tag === 'Left' || material._tag === 'Left') throw new Error('vault setup');
    expect((await vault.right.set(handle.right, material.right))._tag).toBe('Right');
    await vault.right.close();
    const env = { ...baseEnv(box.home), CRUSTCORE_VAULT_KEYFILE: keyFile, CRUSTCORE_CODEX_UPSTREAM: model.origin };
    try {
      const run = await runWorker('codex', box.repo, env);
      expect(run.status, run.stdout + run.stderr).toBe(0);
      expect(model.requests.length).toBeGreaterThanOrEqual(2);
      for (const request of model.requests) expect(request.headers.authorization).toBe(`Bearer ${TEST_API_KEY}`);
      expect(filesContaining(readTree(join(box.home, 'projects')), TEST_API_KEY)).toEqual([]);
    } finally {
      await model.close();
    }
  }, 240_000);
});

describe('golden: crustcore run --backend with a setup problem', () => {
  it('no API key: exit 2 with the variable to set, before any task starts', async () => {
    const box = makeRepo(NODE_REPO);
    roots.push(box.root);
    const run = await cliAsync(baseEnv(box.home), [
      'run',
      '--dir',
      box.repo,
      '--goal',
      'make add() add',
      '--backend',
      'codex',
      // Without a terminal the default --approve ask is refused first (also exit 2); say auto.
      '--approve',
      'auto',
      '--json',
    ]);
    expect(run.status, run.stdout + run.stderr).toBe(2);
    expect(run.stderr).toContain('export OPENAI_API_KEY=');
  }, 120_000);
});
