import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FileVault, SecretHandle, SecretMaterial } from '@crustcore/secrets';
import { describe, expect, it } from 'vitest';
import {
  AgentSetupError,
  createBackend,
  demoTrajectory,
  NativeAgentBackend,
  nativeAgentChecks,
  setupModel,
} from '../src/index.js';
import { TestGate, tempTree } from './helpers.js';

const context = (home: string, options: Record<string, string>) => ({
  env: {},
  goal: 'g',
  toolGate: new TestGate(),
  home,
  options,
});

describe('createBackend', () => {
  it('builds the native backend from a replay file or an embedded trajectory', async () => {
    const home = tempTree({});
    const path = join(home, 't.json');
    writeFileSync(path, JSON.stringify(demoTrajectory()));
    expect(await createBackend('native', context(home, { replay: path }))).toBeInstanceOf(NativeAgentBackend);
    const embedded = await createBackend('native', { ...context(home, {}), trajectory: demoTrajectory() });
    expect(embedded.name).toBe('native');
  });

  it('setup problems a user can fix are AgentSetupError with a fix', async () => {
    const home = tempTree({});
    await expect(createBackend('codex', context(home, {}))).rejects.toBeInstanceOf(AgentSetupError);
    await expect(createBackend('native', context(home, { replay: join(home, 'missing.json') }))).rejects.toThrow(
      /--replay .*cannot read trajectory file/,
    );
    await expect(createBackend('native', context(home, { model: 'nobody/nothing' }))).rejects.toThrow(
      /no model "nobody\/nothing"/,
    );
    await expect(
      createBackend('native', { ...context(home, { thinking: 'extreme' }), trajectory: demoTrajectory() }),
    ).rejects.toThrow(/not a thinking level/);
    const bad = join(home, 'models.json');
    writeFileSync(
      bad,
      '{"version":1,"providers":[{"id":"x","kind":"anthropic","key":"sk-ant-raw-key-in-config","models":[]}]}',
    );
    await expect(createBackend('native', context(home, { modelsConfig: bad }))).rejects.toThrow(/secret:\/\/NAME/);
  });
});

describe('setupModel', () => {
  it('keys come from the vault by handle and are scrubbed from model-visible text', async () => {
    const home = tempTree({});
    const keyFile = join(home, 'vault.key');
    const vault = await FileVault.open({
      path: join(home, 'vault'),
      key: { kind: 'key-file', path: keyFile, createIfMissing: true },
    });
    if (vault._tag === 'Left') throw new Error(vault.left._tag);
    const handle = SecretHandle.create('LOCAL_KEY');
    const material = SecretMaterial.fromText('local-key-0123456789-abcdefghij');
    if (handle._tag === 'Left' || material._tag === 'Left') throw new Error('setup');
    await vault.right.set(handle.right, material.right);
    vault.right.close();
    const registry = join(home, 'models.json');
    writeFileSync(
      registry,
      JSON.stringify({
        version: 1,
        defaultRole: 'implement',
        providers: [
          {
            id: 'local',
            kind: 'openai-compatible',
            baseUrl: 'http://127.0.0.1:9/v1',
            key: 'secret://LOCAL_KEY',
            models: [{ id: 'm1', roles: ['implement', 'summarize'] }],
          },
        ],
      }),
    );
    const setup = await setupModel({ home, env: { CRUSTCORE_VAULT_KEYFILE: keyFile }, modelsConfig: registry });
    if (setup._tag === 'Left') throw new Error(setup.left.message);
    expect(setup.right.label).toBe('local/m1');
    expect(setup.right.routeRoles).toEqual({ summarize: 'summarize', subagent: 'summarize' });
    expect(setup.right.scrub('the key is local-key-0123456789-abcdefghij.')).not.toContain('local-key-0123456789');
    expect(setup.right.warnings).toEqual([]);
    // The key is in the vault, but without the key file nothing can read it: no model can answer,
    // and setup says which provider needs which key before any request is sent.
    const noVault = await setupModel({ home, env: {}, modelsConfig: registry });
    expect(noVault._tag === 'Left' && noVault.left).toMatchObject({
      kind: 'no-model-key',
      message: expect.stringMatching(/local needs LOCAL_KEY.*no vault key/),
      fix: expect.stringContaining('crustcore secret set LOCAL_KEY'),
    });
    const pinned = await setupModel({
      home,
      env: { LOCAL_KEY: 'from-the-env-0123456789' },
      modelsConfig: registry,
      model: 'local/m1',
    });
    expect(pinned._tag === 'Right' && pinned.right.routeRoles).toEqual({});
  });

  it('with no key anywhere, the example registry is refused before any request (no fallback to its local endpoint)', async () => {
    const home = tempTree({});
    const none = await setupModel({ home, env: {} });
    expect(none._tag === 'Left' && none.left).toMatchObject({
      kind: 'no-model-key',
      message: expect.stringMatching(/anthropic needs ANTHROPIC_API_KEY, openai needs OPENAI_API_KEY/),
      fix: expect.stringContaining('crustcore secret set ANTHROPIC_API_KEY'),
    });
    // Pinned to a provider without its key: the same error, naming that provider's key only.
    const pinned = await setupModel({ home, env: {}, model: 'openai/gpt-5' });
    expect(pinned._tag === 'Left' && pinned.left.message).toMatch(
      /^no model key found for openai\/gpt-5: openai needs OPENAI_API_KEY \(/,
    );
  });

  it('CONTROL: with one key, the example registry routes to that provider only; its local endpoint is never a fallback', async () => {
    const home = tempTree({});
    const setup = await setupModel({ home, env: { OPENAI_API_KEY: 'sk-test-0123456789abcdefghij' } });
    if (setup._tag === 'Left') throw new Error(setup.left.message);
    expect(setup.right.label).toBe('openai/gpt-5');
    expect(setup.right.registry?.providers.map((provider) => provider.id)).toEqual(['openai']);
    // Named by the person, the example's keyless local endpoint is theirs to use.
    const local = await setupModel({ home, env: {}, model: 'ollama/qwen3:14b' });
    expect(local._tag === 'Right' && local.right.label).toBe('ollama/qwen3:14b');
  });
});

describe('nativeAgentChecks', () => {
  it('reports registry, keys and tool helpers', async () => {
    const home = tempTree({});
    const checks = await nativeAgentChecks({ home, env: { PATH: process.env.PATH } });
    expect(checks.map((c) => c.name)).toEqual([
      'model registry',
      'model keys',
      'grep engine',
      'check_syntax: node',
      'check_syntax: python3',
    ]);
    expect(checks[0]?.ok).toBe(true);
    expect(checks[1]).toMatchObject({ ok: false, detail: expect.stringMatching(/no vault key/) });
    expect(checks[3]?.ok).toBe(true);
  });
});
