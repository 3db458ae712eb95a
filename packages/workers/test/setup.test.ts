/**
 * Finding the CLIs, probing them for doctor, and the setup errors of
 * `createBackend` (missing key, unknown backend), plus the refusals a run
 * gives before anything starts. The real CLIs are devDependencies here; a
 * missing one fails these tests with the install command.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { mintSandboxExecCap, type SandboxExecCap } from '@crustcore/sandbox';
import { SecretMaterial } from '@crustcore/secrets';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BRIDGE_SCRIPT_PATH,
  ClaudeBackend,
  CodexBackend,
  createBackend,
  locateWorkerCli,
  probeWorkerClis,
  WORKER_CLI_INSTALL,
  WorkerSetupError,
} from '../src/index.js';
import {
  capability,
  FAILING_NODE_PROJECT,
  makeWorkspace,
  TEST_API_KEY,
  type Workspace,
  workerInput,
} from './worker-harness.js';

const workspaces: Workspace[] = [];
afterEach(async () => {
  for (const workspace of workspaces.splice(0)) await workspace.cleanup();
});

function key(): SecretMaterial {
  const material = SecretMaterial.fromText(TEST_API_KEY);
  if (material._tag === 'Left') throw new Error('key');
  return material.right;
}

describe('locateWorkerCli', () => {
  it('finds the native Codex binary in its platform package, with its bundled ripgrep', () => {
    const found = locateWorkerCli('codex');
    if (found._tag === 'Left') throw new Error(`${found.left.message} — ${found.left.fix}`);
    expect(found.right.executable).toBe(join(found.right.mountSource, found.right.executableInMount));
    expect(found.right.executable.endsWith('/bin/codex')).toBe(true);
    expect(found.right.mountSource).toMatch(/codex-linux-(x64|arm64)\/vendor\//);
    expect(found.right.pathDirectoriesInMount).toEqual(['codex-path']);
    expect(statSync(found.right.executable).mode & 0o111).not.toBe(0);
  });

  it('finds the native Claude Code binary (the copied bin/claude.exe)', () => {
    const found = locateWorkerCli('claude');
    if (found._tag === 'Left') throw new Error(`${found.left.message} — ${found.left.fix}`);
    expect(found.right.executable).toBe(join(found.right.mountSource, found.right.executableInMount));
    expect(found.right.pathDirectoriesInMount).toEqual([]);
  });

  it('refuses an explicit executable that is not a native binary, with the install command', () => {
    const refused = locateWorkerCli('codex', { executable: BRIDGE_SCRIPT_PATH });
    expect(refused).toMatchObject({ _tag: 'Left', left: { _tag: 'WorkerCliMissing', fix: WORKER_CLI_INSTALL.codex } });
    expect(WORKER_CLI_INSTALL).toEqual({
      codex: 'npm install -g @openai/codex',
      claude: 'npm install -g @anthropic-ai/claude-code',
    });
  });
});

describe('probeWorkerClis', () => {
  it('reports both installed CLIs with their versions', async () => {
    const statuses = await probeWorkerClis();
    expect(statuses).toEqual([
      expect.objectContaining({ _tag: 'Installed', name: 'codex', version: '0.171.0' }),
      expect.objectContaining({ _tag: 'Installed', name: 'claude', version: '2.1.332' }),
    ]);
  });
});

describe('createBackend', () => {
  const context = (env: Record<string, string | undefined>) => ({
    workerCap: () => capability('worker'),
    env,
    goal: 'g',
  });

  it('builds both backends, reading the key from the environment', async () => {
    const codex = await createBackend('codex', context({ OPENAI_API_KEY: TEST_API_KEY }));
    const claude = await createBackend('claude', context({ ANTHROPIC_API_KEY: TEST_API_KEY }));
    expect(codex).toBeInstanceOf(CodexBackend);
    expect(codex.name).toBe('codex');
    expect(claude).toBeInstanceOf(ClaudeBackend);
    expect(claude.name).toBe('claude');
  });

  it('a missing key is a setup error that says what to set', async () => {
    const failure = await createBackend('claude', context({})).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(WorkerSetupError);
    expect((failure as WorkerSetupError).fix).toContain('ANTHROPIC_API_KEY');
  });

  it('an unknown backend or a non-native executable is a setup error', async () => {
    // @ts-expect-error: only 'codex' and 'claude' exist.
    await expect(createBackend('aider', context({ OPENAI_API_KEY: TEST_API_KEY }))).rejects.toBeInstanceOf(
      WorkerSetupError,
    );
    const failure = await createBackend('codex', {
      ...context({ OPENAI_API_KEY: TEST_API_KEY }),
      cliExecutable: '/bin/sh-does-not-exist',
    }).catch((error: unknown) => error);
    expect((failure as WorkerSetupError).fix).toBe('npm install -g @openai/codex');
  });
});

describe('refusals before a worker starts', () => {
  it('will not run on the process jail (no network isolation), another profile, or a forged capability', async () => {
    const workspace = await makeWorkspace('refusal', FAILING_NODE_PROJECT);
    workspaces.push(workspace);
    const jail = mintSandboxExecCap('worker', { backend: 'process-jail' });
    if (jail._tag === 'Left') throw new Error(jail.left.message);
    const onJail = await new CodexBackend({ workerCap: jail.right, apiKey: key() }).run(workerInput('refusal'), {
      worktree: workspace.worktree,
      home: workspace.home,
    });
    expect(onJail.failure).toContain('bubblewrap');
    const wrongProfile = await new ClaudeBackend({ workerCap: capability('verify'), apiKey: key() }).run(
      workerInput('refusal'),
      { worktree: workspace.worktree, home: workspace.home },
    );
    expect(wrongProfile.failure).toContain('worker-profile');
    const forgedCap = { profileName: 'worker', backend: 'bubblewrap', limits: {} } as unknown as SandboxExecCap;
    const forged = await new CodexBackend({ workerCap: forgedCap, apiKey: key() }).run(workerInput('refusal'), {
      worktree: workspace.worktree,
      home: workspace.home,
    });
    expect(forged.failure).toContain('worker-profile');
    expect(existsSync(join(workspace.worktree.path, 'src/math.js'))).toBe(true);
  });

  it('a key the caller cannot produce is a failure value, not a throw', async () => {
    const workspace = await makeWorkspace('no-key', FAILING_NODE_PROJECT);
    workspaces.push(workspace);
    const result = await new CodexBackend({
      workerCap: capability('worker'),
      apiKey: () => {
        throw new Error('vault locked');
      },
    }).run(workerInput('no-key'), { worktree: workspace.worktree, home: workspace.home });
    expect(result.failure).toBe('no model API key: vault locked');
  });

  it('type-level: a plain object is not a capability and a string is not a key', () => {
    // @ts-expect-error: workerCap must be a SandboxExecCap minted by @crustcore/sandbox.
    const forged = new CodexBackend({ workerCap: { profileName: 'worker' }, apiKey: key() });
    // @ts-expect-error: the key must be SecretMaterial, never a plain string.
    const plain = new ClaudeBackend({ workerCap: capability('worker'), apiKey: TEST_API_KEY });
    expect(forged.name).toBe('codex');
    expect(plain.name).toBe('claude');
  });
});
