/**
 * A new user with no model key (issue #17, item 3), through the built CLI
 * with HOME, XDG_CONFIG_HOME and CRUSTCORE_HOME in a temp directory: `run
 * --backend native` and `chat` stop before any attempt with a usage error
 * (exit 2) that names which provider needs which key and how to store it,
 * and never reach for an endpoint the user did not configure (the example
 * registry's local Ollama: "fetch failed: ECONNREFUSED" four times and a
 * verify failure, before). `crustcore models` says the same.
 *
 * CONTROL: the same run with the key present (a registry of the user's whose
 * keyed provider is a scripted server on 127.0.0.1, named from the user's
 * config file) reaches the server with that key and completes — the stop is
 * the missing key, not an endpoint that was never there.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ModelServer, registryFor, startModelServer } from './agent/model-server.js';
import { buildCli, CLI, cliEnv, makeRepo, NODE_REPO, type Sandbox } from './cli-harness.js';

beforeAll(() => buildCli(), 120_000);

let server: ModelServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

const xdg = (box: Sandbox): string => join(box.root, 'xdg');

/** The CLI as a process of its own (the model server answers from this one, so no spawnSync). */
function cli(box: Sandbox, args: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<Run> {
  return new Promise((done) => {
    const child = execFile(
      process.execPath,
      [CLI, ...args],
      {
        cwd: box.repo,
        encoding: 'utf8',
        timeout: 120_000,
        env: cliEnv(box, { XDG_CONFIG_HOME: xdg(box), ...env }),
      },
      (_error, stdout, stderr) => done({ status: child.exitCode, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

const NAMES_THE_KEYS = /anthropic needs ANTHROPIC_API_KEY, openai needs OPENAI_API_KEY/;
const SAYS_HOW = /crustcore secret set ANTHROPIC_API_KEY/;

describe('no model key: a clear usage error before any attempt', () => {
  it('run --backend native: exit 2 naming provider and key, no task started, no connection tried', async () => {
    const box = makeRepo(NODE_REPO);
    const run = await cli(box, ['run', '--backend', 'native', '--goal', 'fix add', '--approve', 'deny']);
    expect(run.status, run.stderr).toBe(2);
    expect(run.stderr).toMatch(NAMES_THE_KEYS);
    expect(run.stderr).toMatch(SAYS_HOW);
    expect(run.stderr + run.stdout).not.toMatch(/ECONNREFUSED|fetch failed|attempt 1/);
    // Nothing ran: no task ledger was opened for the repository.
    expect(existsSync(join(box.home, 'projects'))).toBe(false);
  });

  it('chat: exit 2 with the same words, before the prompt', async () => {
    const box = makeRepo(NODE_REPO);
    const chat = await cli(box, ['chat', '--verify', 'node --test']);
    expect(chat.status, chat.stderr).toBe(2);
    expect(chat.stderr).toMatch(NAMES_THE_KEYS);
    expect(chat.stderr).toMatch(SAYS_HOW);
    expect(chat.stdout).not.toContain('crustcore chat');
  });

  it('models: not ready, the same words, and each provider says whether its key is found', async () => {
    const box = makeRepo(NODE_REPO);
    const models = await cli(box, ['models']);
    expect(models.status, models.stderr).toBe(0);
    expect(models.stdout).toMatch(/Not ready: .*anthropic needs ANTHROPIC_API_KEY/);
    expect(models.stdout).toMatch(SAYS_HOW);
    expect(models.stdout).toMatch(/secret:\/\/ANTHROPIC_API_KEY missing — crustcore secret set ANTHROPIC_API_KEY/);
    const json = await cli(box, ['models', '--json'], { OPENAI_API_KEY: 'sk-test-0123456789abcdefghij' });
    const report = JSON.parse(json.stdout) as { ready: { ok: boolean; message: string }; keys: Record<string, string> };
    expect(report.keys).toMatchObject({ OPENAI_API_KEY: 'environment', ANTHROPIC_API_KEY: 'missing' });
    expect(report.ready).toMatchObject({ ok: true, message: expect.stringContaining('openai/gpt-5') });
  });
});

describe("the user's own registry, named in their config file", () => {
  const KEY = 'MY_MODEL_KEY';
  const SECRET = 'sk-scripted-0123456789abcdefghij';

  async function setUp(): Promise<Sandbox> {
    server = await startModelServer((_request, index) =>
      index === 0
        ? {
            text: 'fixing',
            calls: [
              {
                name: 'write_file',
                arguments: { path: 'src/math.js', content: 'export function add(a, b) {\n  return a + b;\n}\n' },
              },
            ],
          }
        : { text: 'done' },
    );
    const box = makeRepo(NODE_REPO);
    mkdirSync(join(xdg(box), 'crustcore'), { recursive: true });
    writeFileSync(join(xdg(box), 'crustcore', 'models.json'), registryFor(server, KEY));
    // Relative paths in a config file are from the file's directory.
    writeFileSync(
      join(xdg(box), 'crustcore', 'config.json'),
      JSON.stringify({ backend: 'native', modelsConfig: 'models.json', approve: 'auto', verify: 'node --test' }),
    );
    return box;
  }

  it('without its key: exit 2 naming that provider and key; the server sees no request', async () => {
    const box = await setUp();
    const run = await cli(box, ['run', '--goal', 'fix add']);
    expect(run.status, run.stderr).toBe(2);
    expect(run.stderr).toMatch(new RegExp(`scripted needs ${KEY}`));
    expect(run.stderr).toMatch(new RegExp(`crustcore secret set ${KEY}`));
    expect(server?.requests).toHaveLength(0);
  });

  it('CONTROL: with its key the run reaches the server with that key and the fix lands', async () => {
    const box = await setUp();
    const run = await cli(box, ['run', '--goal', 'fix add', '--json'], { [KEY]: SECRET });
    expect(run.status, run.stderr).toBe(0);
    expect(server?.requests.length).toBeGreaterThanOrEqual(1);
    expect(String(server?.requests[0]?.headers.authorization)).toBe(`Bearer ${SECRET}`);
    expect(readFileSync(join(box.repo, 'src/math.js'), 'utf8')).toContain('a + b');
  });
});
