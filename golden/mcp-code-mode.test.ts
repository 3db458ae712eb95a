/**
 * Code mode (#14 item 5) end to end: `crustcore run --backend native` with the user's
 * `server-filesystem` registered and approved through the CLI, and a scripted model on 127.0.0.1
 * whose recorded trajectory reads typed stubs (`mcp_describe {server}`) and then runs a script
 * (`mcp_code`) that reads a file through the server. The script runs in a sandbox of its own; its
 * call reaches the gateway only over the socket bound into it, and is a kernel tool call of its own
 * inside the code-mode call: both visible in `crustcore export`, checked by `inspect --replay`. What
 * the model sees is redacted and wrapped as untrusted data; the task then verifies and applies.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onlyInsideWrappers, wrapUntrusted } from '@crustcore/agent';
import { McpGateway } from '@crustcore/mcp-gateway';
import { FileVault, Redactor, SecretHandle, SecretMaterial } from '@crustcore/secrets';
import { describe, expect, it } from 'vitest';
import { approveAll, stdioRecord } from '../packages/mcp-gateway/test/gateway-harness.js';
import { CALC_REPO, ledgerFrames, makeBox, runNative } from './agent/harness.js';
import { type RecordedRequest, registryFor, type ServerTurn, startModelServer } from './agent/model-server.js';
import { CLI, makeRepo } from './cli-harness.js';
import { baseEnv, cli, cliAsync } from './daemon-harness.js';
import { NODE_MODULES, registerFilesServer } from './mcp-harness.js';

const TOKEN = `ghp_${'Zx81Qm'.repeat(6)}`;
const NOTES = `deploy token ${TOKEN}\nfix add and multiply in calc\n`;

const FIX_BOTH = [
  {
    name: 'edit_file',
    arguments: { path: 'src/calc.js', oldText: '  return a - b;', newText: '  return a + b;', startLine: 3 },
  },
  {
    name: 'edit_file',
    arguments: { path: 'src/calc.js', oldText: '  return a + b;', newText: '  return a * b;', startLine: 7 },
  },
];

/**
 * The model's script: read the notes through the server and print every line (the token line
 * too), then write a summary through it — a tool without a read-only hint, so it takes the
 * record's default policy at approval.
 */
const SCRIPT = `const notes = await tools.files.read_text_file({ path: 'NOTES.md' });
for (const line of notes.split('\\n')) if (line !== '') console.log('note:', line);
try {
  await tools.files.write_file({ path: 'SUMMARY.md', content: 'fix calc\\n' });
  console.log('summary written');
} catch (error) {
  console.log('summary refused:', error.message);
}`;

const TURNS: readonly ServerTurn[] = [
  { text: 'Which tools does files have?', calls: [{ name: 'mcp_describe', arguments: { server: 'files' } }] },
  { calls: [{ name: 'mcp_code', arguments: { script: SCRIPT } }] },
  { text: 'The notes say to fix calc.', calls: FIX_BOTH },
  { text: 'Fixed.' },
];

const toolTexts = (request: RecordedRequest | undefined): string[] =>
  (request?.json.messages ?? []).filter((m) => m.role === 'tool').map((m) => String(m.content));

const toolNames = (request: RecordedRequest | undefined): string[] =>
  ((request?.json.tools ?? []) as { function?: { name?: string } }[]).map((tool) => tool.function?.name ?? '');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

type Frame = { kind: string; payload?: Record<string, unknown> };

function frames(env: NodeJS.ProcessEnv, stateDir: string): Frame[] {
  const exported = cli(env, ['export', '--dir', stateDir, '--format', 'jsonl']);
  expect(exported.status, exported.stderr).toBe(0);
  return exported.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Frame);
}

/** One native run on that repository with the scripted model. */
/** The calculator repository with notes, and `files` registered with `policy` and approved, as a user does. */
function registeredRepository(policy: 'allow' | 'ask') {
  const box = makeRepo({ ...CALC_REPO, 'NOTES.md': NOTES });
  const env = baseEnv(box.home);
  registerFilesServer(env, { policy });
  return { box, env };
}

async function codeModeRun(policy: 'allow' | 'ask', profile: 'full' | 'supervised' = 'full') {
  const { box, env } = registeredRepository(policy);
  const model = await startModelServer((_request, index) => TURNS[index] ?? { text: 'done' });
  try {
    const registry = join(box.root, 'models.json');
    writeFileSync(registry, registryFor(model));
    const run = await cliAsync(env, [
      'run',
      '--dir',
      box.repo,
      '--goal',
      'fix what NOTES.md says',
      '--backend',
      'native',
      '--models-config',
      registry,
      // The full profile runs an `allow` tool (and the meta-tools) without asking; `ask` tools still need a person.
      '--profile',
      profile,
      '--approve',
      'auto',
      '--verify',
      'node --test',
      '--no-memory',
      '--json',
    ]);
    return { box, env, run, requests: model.requests };
  } finally {
    await model.close();
  }
}

const mcpOps = (all: Frame[]) =>
  all
    .filter((frame) => frame.kind === 'ToolCallRequested')
    .map((frame) => frame.payload?.operation as { op: string; argv?: string[]; host?: string })
    .filter((op) => op.argv?.[0] === 'mcp' || op.op === 'net.connect');

describe('golden: code mode through crustcore run --backend native', () => {
  it('a script reads a file through server-filesystem: receipted inner calls, redacted, wrapped; verified and applied', async () => {
    const { box, env, run, requests } = await codeModeRun('allow');
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(readFileSync(join(box.repo, 'src/calc.js'), 'utf8')).toContain('return a * b;');
    // Up front the model has the three meta-tools and no MCP tool; the stubs come when asked.
    expect(toolNames(requests[0]).filter((name) => name.startsWith('mcp'))).toEqual([
      'mcp_search',
      'mcp_describe',
      'mcp_code',
    ]);
    const stubs = toolTexts(requests[1]).at(-1) ?? '';
    const stub = 'tools.files.read_text_file(args: { path: string; tail?: number; head?: number }): Promise<string>;';
    expect(stubs).toContain(stub);
    expect(onlyInsideWrappers(stubs, stub)).toBe(true);
    const output = toolTexts(requests[2]).at(-1) ?? '';
    expect(output).toMatch(/^the script finished; its output:/);
    expect(output).toContain('note: fix add and multiply in calc');
    expect(output).toContain('summary written');
    expect(readFileSync(join(box.repo, 'SUMMARY.md'), 'utf8')).toBe('fix calc\n');
    expect(onlyInsideWrappers(output, 'fix add and multiply')).toBe(true);
    expect(output).not.toContain(TOKEN);
    expect(output).toMatch(/note: deploy token \[REDACTED/);
    const stateDir = String(run.json?.stateDir);
    const all = frames(env, stateDir);
    expect(mcpOps(all).map((op) => op.argv)).toEqual([
      ['mcp', 'describe', 'files', '(stubs)'],
      ['mcp', 'code'],
      ['mcp', 'files', 'read_text_file'],
      ['mcp', 'files', 'write_file'],
    ]);
    const requested = all.filter((frame) => frame.kind === 'ToolCallRequested').map((frame) => frame.payload?.tool);
    expect(requested.filter((tool) => String(tool).startsWith('mcp'))).toEqual([
      'mcp_describe',
      'mcp_code',
      'mcp__files__read_text_file',
      'mcp__files__write_file',
    ]);
    // Every call completed with a receipt; the inner ones inside the code-mode call (before it completed).
    const completed = all.filter((frame) => frame.kind === 'ToolCallCompleted');
    expect(completed).toHaveLength(requested.length);
    const ids = (kind: string) =>
      all.filter((frame) => frame.kind === kind).map((frame) => String(frame.payload?.toolCallId));
    const code = ids('ToolCallRequested')[requested.indexOf('mcp_code')] as string;
    const inner = ids('ToolCallRequested')[requested.indexOf('mcp__files__read_text_file')] as string;
    expect(ids('ToolCallCompleted').indexOf(inner)).toBeLessThan(ids('ToolCallCompleted').indexOf(code));
    const inspect = cli(env, ['inspect', '--dir', stateDir, '--replay']);
    expect(inspect.status, inspect.stdout + inspect.stderr).toBe(0);
    for (const file of filesUnder(stateDir)) expect(readFileSync(file, 'latin1')).not.toContain(TOKEN);
  }, 240_000);

  it('the kernel decides each inner call: an `ask` tool with nobody to ask is denied, never runs, and the script sees why (CONTROL: the run above, where it is allowed)', async () => {
    const { box, run, env, requests } = await codeModeRun('ask');
    expect(run.status, run.stdout + run.stderr).toBe(0);
    const output = toolTexts(requests[2]).at(-1) ?? '';
    // The read-only tool was approved `allow` (its hint); the write took the record's `ask`.
    expect(output).toContain('note: fix add and multiply in calc');
    expect(output).toMatch(/summary refused: CrustCore refused this call: .*no one can be asked, so denied/);
    expect(readFileSync(join(box.repo, 'src/calc.js'), 'utf8')).toContain('return a * b;');
    expect(() => readFileSync(join(box.repo, 'SUMMARY.md'))).toThrow(/ENOENT/);
    const all = frames(env, String(run.json?.stateDir));
    expect(mcpOps(all)).toContainEqual({ op: 'net.connect', host: 'mcp://files/write_file', port: 0 });
    const requested = all.filter((frame) => frame.kind === 'ToolCallRequested').map((frame) => frame.payload?.tool);
    // Every call completed but the denied one, which has no ToolCallCompleted: its execute never ran.
    expect(requested.filter((tool) => tool === 'mcp__files__write_file')).toHaveLength(1);
    expect(all.filter((frame) => frame.kind === 'ToolCallCompleted')).toHaveLength(requested.length - 1);
  }, 240_000);

  it('the code-mode call is a kernel call itself: supervised with nobody to ask, no script runs and nothing is called', async () => {
    const { box, run, env, requests } = await codeModeRun('allow', 'supervised');
    const output = toolTexts(requests[2]).at(-1) ?? '';
    expect(output).toMatch(/^\[tool error\] DENIED by CrustCore: supervised profile: ask exec; no one can be asked/);
    expect(JSON.stringify(requests.map((request) => request.json.messages))).not.toContain('fix add and multiply');
    expect(() => readFileSync(join(box.repo, 'SUMMARY.md'))).toThrow(/ENOENT/);
    const all = frames(env, String(run.json?.stateDir));
    const requested = all.filter((frame) => frame.kind === 'ToolCallRequested').map((frame) => frame.payload?.tool);
    expect(requested.filter((tool) => String(tool).startsWith('mcp'))).toEqual(['mcp_describe', 'mcp_code']);
  }, 240_000);
});

describe('golden: code mode and a vault credential (the real runtime, kernel and ledger)', () => {
  /** server-everything's env dump, given the credential by the gateway from the vault (its `auth`). */
  async function everythingWithCredential(credential: string) {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'golden-code-')));
    const vault = await FileVault.open({
      path: join(dir, 'vault'),
      key: { kind: 'key-file', path: join(dir, 'vault.key'), createIfMissing: true },
    });
    if (vault._tag === 'Left') throw new Error(vault.left._tag);
    const handle = SecretHandle.create('PLANTED');
    const material = SecretMaterial.fromText(credential);
    if (handle._tag === 'Left' || material._tag === 'Left') throw new Error('secret setup');
    expect((await vault.right.set(handle.right, material.right))._tag).toBe('Right');
    const base = stdioRecord(
      'every',
      [join(NODE_MODULES, '@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
      {
        timeoutMs: 30_000,
        readPaths: [NODE_MODULES],
        auth: { handle: 'secret://PLANTED', target: 'PLANTED_API_TOKEN' },
      },
    );
    return { record: await approveAll(base, dir, () => 'allow', credential), vault: vault.right };
  }

  it("a script that dumps the server's environment and reverses it: the model and every state file see it redacted", async () => {
    const credential = `cc-planted-${'9f2e'.repeat(5)}-code`;
    const reversed = [...credential].reverse().join('');
    const { record, vault } = await everythingWithCredential(credential);
    const script = `const dump = await tools.every.get_env({});
console.log(dump);
console.log('reversed', [...dump].reverse().join(''));`;
    const model = await startModelServer(
      (_request, index) =>
        [
          { calls: [{ name: 'mcp_code', arguments: { script } }] },
          { text: 'Now the fix.', calls: FIX_BOTH },
          { text: 'Fixed.' },
        ][index] ?? { text: 'done' },
    );
    const box = makeBox(CALC_REPO);
    writeFileSync(join(box.root, 'models.json'), registryFor(model));
    try {
      const { result } = await runNative(box, {
        modelsConfig: join(box.root, 'models.json'),
        profile: 'full',
        extraToolsFor:
          ({ toolGate, workerCap }) =>
          (worktree) =>
            new McpGateway({
              registry: () => ({ version: 1, servers: [record] }),
              repository: worktree,
              worktree,
              secrets: vault,
              redactor: new Redactor(),
              wrap: wrapUntrusted,
              codeMode: { gate: toolGate, workerCap },
            }),
      });
      expect(result.outcome.kind, result.outcome.reason).toBe('completed');
      const dumped = toolTexts(model.requests[1]).at(-1) ?? '';
      // Control within: the server did return its environment, our variable in it, as a redaction marker.
      expect(dumped).toMatch(/PLANTED_API_TOKEN.{0,8}\[REDACTED/);
      expect(dumped).toContain('reversed');
      for (const request of model.requests) {
        expect(request.body).not.toContain(credential);
        expect(request.body).not.toContain(reversed);
      }
      const stateDir = result.logPath.replace(/\/events\.log$/, '');
      const frames = ledgerFrames(result.logPath);
      expect(
        frames
          .filter((frame) => frame.kind === 'ToolCallRequested')
          .map((frame) => (frame.payload as { tool: string }).tool),
      ).toContain('mcp__every__get-env');
      for (const file of filesUnder(stateDir)) {
        const bytes = readFileSync(file, 'latin1');
        expect(bytes).not.toContain(credential);
        expect(bytes).not.toContain(reversed);
      }
    } finally {
      vault.close();
      await model.close();
    }
  }, 240_000);
});

describe('golden: crustcore chat offers code mode too', () => {
  it('with a usable server registered, the model of a chat request starts with the three meta-tools', async () => {
    const { box, env } = registeredRepository('allow');
    const model = await startModelServer(() => ({ text: 'Nothing to do.' }));
    try {
      const registry = join(box.root, 'models.json');
      writeFileSync(registry, registryFor(model));
      const chat = spawn(process.execPath, [CLI, 'chat', '--dir', box.repo, '--models-config', registry], {
        cwd: box.repo,
        stdio: ['pipe', 'pipe', 'pipe'],
        env,
      });
      let output = '';
      for (const stream of [chat.stdout, chat.stderr]) stream.on('data', (piece: Buffer) => (output += piece));
      const exited = new Promise<number | null>((done) => chat.once('exit', done));
      // One request, then end of input: chat answers it and exits.
      chat.stdin.end('what MCP tools are there?\n');
      expect(await exited, output).toBe(0);
      expect(toolNames(model.requests[0]).filter((name) => name.startsWith('mcp'))).toEqual([
        'mcp_search',
        'mcp_describe',
        'mcp_code',
      ]);
    } finally {
      await model.close();
    }
  }, 240_000);
});
