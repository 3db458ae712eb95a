/**
 * The REAL Claude Code as a worker on the user's Claude Code sign-in instead of an API key:
 * `createBackend('claude', …)` with no ANTHROPIC_API_KEY finds `~/.claude/.credentials.json` on
 * the host, and the credential proxy sends its access token upstream as a bearer token with
 * the OAuth beta beside Claude Code's own. The scripted model (Anthropic Messages on 127.0.0.1)
 * makes the worker go looking for the token: the host's credentials file, its HOME, `env`. It
 * finds nothing; the token appears in no file, report or result. CONTROL: the file is there and
 * readable on the host, so the worker's `cat` would have read it without the sandbox.
 *
 * What this cannot show here: that Anthropic's API accepts the request (no network). The
 * request carries what Claude Code itself sends on a subscription (bearer token, the
 * `oauth-2025-04-20` beta).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLAUDE_OAUTH_BETA, createBackend, PLACEHOLDER_API_KEY, type WorkerRunReport } from '../src/index.js';
import { startScriptedModel } from './scripted-model.js';
import {
  capability,
  FAILING_NODE_PROJECT,
  FIX_MATH_COMMAND,
  filesContaining,
  makeWorkspace,
  readTree,
  requireCli,
  type Workspace,
  workerInput,
} from './worker-harness.js';

const workspaces: Workspace[] = [];
afterEach(async () => {
  for (const workspace of workspaces.splice(0)) await workspace.cleanup();
});

const TOKEN = `sk-ant-oat01-crustcore-test-${Date.now().toString(36)}-0123456789abcdefghij`;

describe('claude (real CLI) on the Claude Code sign-in', () => {
  it('sends the sign-in token upstream as a bearer token; the worker never gets hold of it', async () => {
    requireCli('claude');
    const taskId = 'subscription-claude';
    const workspace = await makeWorkspace(taskId, FAILING_NODE_PROJECT);
    workspaces.push(workspace);
    const hostHome = join(workspace.base, 'host-home');
    const credentials = join(hostHome, '.claude', '.credentials.json');
    mkdirSync(join(hostHome, '.claude'), { recursive: true });
    const signIn = {
      accessToken: TOKEN,
      refreshToken: 'r',
      expiresAt: Date.now() + 3_600_000,
      subscriptionType: 'max',
    };
    writeFileSync(credentials, JSON.stringify({ claudeAiOauth: signIn }), { mode: 0o600 });
    // CONTROL: the target is real and readable outside the sandbox.
    expect(readFileSync(credentials, 'utf8')).toContain(TOKEN);

    const hunt = [
      `cat ${credentials} > leak.txt 2>&1`,
      `ls -la ${hostHome} ${hostHome}/.claude >> leak.txt 2>&1`,
      'cat ~/.claude/.credentials.json >> leak.txt 2>&1',
      'env >> leak.txt',
      FIX_MATH_COMMAND,
    ].join('; ');
    const model = await startScriptedModel('anthropic-messages', [
      { kind: 'shell', command: hunt },
      { kind: 'message', text: 'Fixed.\n{"summary":"fixed","done":true,"commands_run":[],"risks":[]}' },
    ]);
    let report: WorkerRunReport | null = null;
    let homeImage = new Map<string, Buffer>() as ReturnType<typeof readTree>;
    try {
      const backend = await createBackend('claude', {
        workerCap: () => capability('worker'),
        env: { HOME: hostHome, PATH: process.env.PATH ?? '/usr/bin:/bin' },
        goal: 'make the tests pass',
        upstream: model.origin,
        onRunReport: (finished) => {
          report = finished;
          homeImage = readTree(finished.homeDirectory);
        },
      });
      const result = await backend.run(workerInput(taskId), { worktree: workspace.worktree, home: workspace.home });
      expect(result.failure, result.transcript.stderrText.slice(-2000)).toBeNull();

      // Upstream: the bearer token, the OAuth beta beside the client's own, no API key header.
      expect(model.requests.length).toBeGreaterThanOrEqual(2);
      for (const request of model.requests) {
        expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`);
        expect(request.headers['x-api-key']).toBeUndefined();
        const betas = String(request.headers['anthropic-beta']).split(',');
        expect(betas).toContain(CLAUDE_OAUTH_BETA);
        // Claude Code's own flags survive beside it (it sends `claude-code-20250219` first).
        expect(betas).toContain('claude-code-20250219');
      }
      const finished = report as WorkerRunReport | null;
      expect(finished?.credential).toBe('claude-subscription');
      expect(finished?.env).toMatchObject({ ANTHROPIC_API_KEY: PLACEHOLDER_API_KEY });

      // The worker's hunt came up empty, and the token is nowhere the worker could leave it.
      if (result.patch._tag !== 'Patch') throw new Error(`expected a patch, got ${result.patch._tag}`);
      expect(result.patch.patch.files.map((file) => file.path)).toContain('leak.txt');
      const leak = readFileSync(join(workspace.worktree.path, 'leak.txt'), 'utf8');
      expect(leak).toMatch(/\.credentials\.json: No such file or directory/);
      expect(leak).not.toContain(TOKEN);
      expect(Buffer.from(result.patch.patch.bytes).toString('utf8')).not.toContain(TOKEN);
      expect(JSON.stringify(result)).not.toContain(TOKEN);
      expect(JSON.stringify(finished)).not.toContain(TOKEN);
      expect(filesContaining(homeImage, TOKEN)).toEqual([]);
      expect(model.requests.some((request) => request.body.includes(TOKEN))).toBe(false);
    } finally {
      await model.close();
    }
  });

  it('with neither a key nor a sign-in, setup says both ways to fix it before anything runs', async () => {
    requireCli('claude');
    const workspace = await makeWorkspace('no-credential', FAILING_NODE_PROJECT);
    workspaces.push(workspace);
    const emptyHome = join(workspace.base, 'empty-home');
    mkdirSync(emptyHome);
    await expect(
      createBackend('claude', {
        workerCap: () => capability('worker'),
        env: { HOME: emptyHome, PATH: process.env.PATH ?? '/usr/bin:/bin' },
        goal: 'g',
      }),
    ).rejects.toMatchObject({
      _tag: 'WorkerSetupError',
      message: expect.stringMatching(/API key or a Claude Code sign-in/),
      fix: expect.stringMatching(/`claude`.*ANTHROPIC_API_KEY/s),
    });
  });
});
