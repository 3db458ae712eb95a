/**
 * A server whose code is the repository's runs on the user's checkout, read-only, never on the task
 * worktree the model writes (client/server-code.ts). The attack: the native agent writes a file the
 * server loads, then asks for the server (mcp_describe starts it lazily); the planted copy would run
 * with the server's credential and read paths. Layouts and spellings vary; each attack has a
 * CONTROL — the same server on the task worktree, as before the defence, runs the planted copy.
 */
import { cpSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadsCodeFromRepository } from '../src/client/server-code.js';
import type { McpGateway, ServerRecord } from '../src/index.js';
import {
  approveAll,
  copyServerScript,
  serverScript as installedServer,
  makeGateway,
  makeWorktree,
  run,
  stdioRecord,
} from './gateway-harness.js';

const REPO = '/home/me/src/app';

describe('which command lines load code from the repository', () => {
  it.each<[string, string, readonly string[]]>([
    ['a relative script', 'node', ['srv.mjs']],
    ['a ./ script', 'node', ['./srv.mjs']],
    ['a script in a subdirectory', 'python3', ['tools/server.py', '--stdio']],
    ['a script above through ..', 'bash', ['../app/run.sh']],
    ['a script under the repository, absolute', 'node', [`${REPO}/scripts/mcp.js`]],
    ['the package in the working directory', 'node', ['.']],
    ['a module imported from the working directory', 'node', ['--import', './boot.mjs', '/opt/mcp/server.js']],
    ['a module required by a bare name', 'node', ['-r', 'dotenv/config', '/opt/mcp/server.js']],
    ['an --import=… spelling', 'node', ['--import=./boot.mjs', '/opt/mcp/server.js']],
    ['inline code', 'node', ['-e', "import('./srv.mjs')"]],
    ['a shell command line', 'sh', ['-c', 'exec node srv.mjs']],
    ['a program inside the repository', '.venv/bin/python', ['-m', 'server']],
    ['a program under the repository, absolute', `${REPO}/bin/server`, ['stdio']],
    ['a launcher resolving packages there', 'npx', ['some-mcp-server']],
    ['another launcher', '/usr/local/bin/uvx', ['mcp-server-git']],
    ['a versioned interpreter', '/usr/bin/python3.11', ['srv.py']],
    // Red team: forms the first lists classified as installed, each still loading from the directory.
    ['a bare module by --import=', 'node', ['--import=tsx', '/opt/mcp/server.js']],
    ['a bare module by --require=', 'node', ['--require=dotenv/config', '/opt/mcp/server.js']],
    ['an option whose value hides the script', 'node', ['--title', '/opt/t', './srv.mjs']],
    ['a python option whose value hides the script', 'python3', ['-W', '/usr', './srv.py']],
    ['inline code in a flag cluster', 'node', ['-pe', "/x/; require('./srv.cjs')"]],
    ['attached inline code', 'python3', ["-cexec(open('srv.py').read())"]],
    ['a shell flag cluster with inline code', 'bash', ['-ec', '/bin/true; ./srv.sh']],
    ['perl -E', 'perl', ['-E', '/x/; do "./srv.pl"']],
    ['an env file', 'node', ['--env-file', 'config', '/opt/mcp/server.js']],
    ['a wrapper running an interpreter', '/usr/bin/env', ['node', 'srv.mjs']],
    ['a wrapper setting NODE_OPTIONS', 'env', ['NODE_OPTIONS=--import=tsx', 'node', '/opt/mcp/server.js']],
    ['a wrapper with a time limit', 'timeout', ['60', 'python3', 'tools/server.py']],
    ['a wrapper given a relative program', 'nice', ['./bin/server']],
    ['a launcher reading its Gemfile', 'bundle', ['exec', 'ruby', '/opt/mcp/server.rb']],
    ['a launcher loading .envrc', 'direnv', ['exec', '/', '/opt/mcp/server']],
    ['an interpreter not in the first list', 'julia', ['srv.jl']],
    ['a jar in the repository', 'java', ['-jar', 'build/server.jar']],
    ['a version-suffixed interpreter', 'node20', ['--import=tsx', '/opt/mcp/server.js']],
    ['an interpreter in capitals', '/opt/bin/NODE', ['--import=tsx', '/opt/mcp/server.js']],
  ])('%s: yes', (_case, command, args) => {
    expect(loadsCodeFromRepository(command, args, REPO)).toBe(true);
  });

  it('an interpreter behind a symlink of another name is still an interpreter', () => {
    const bin = mkdtempSync(join(tmpdir(), 'server-code-bin-'));
    symlinkSync(process.execPath, join(bin, 'js'));
    expect(loadsCodeFromRepository(join(bin, 'js'), ['--import=tsx', '/opt/mcp/server.js'], REPO)).toBe(true);
    expect(loadsCodeFromRepository('js', ['--import=tsx', '/opt/mcp/server.js'], REPO, { PATH: bin })).toBe(true);
    // CONTROL: a program of that name that is no interpreter, with the same arguments, is installed.
    writeFileSync(join(bin, 'tool'), '#!/bin/sh\n', { mode: 0o755 });
    expect(loadsCodeFromRepository(join(bin, 'tool'), ['--import=tsx', '/opt/mcp/server.js'], REPO)).toBe(false);
  });

  it.each<[string, string, readonly string[], Readonly<Record<string, string>>]>([
    ['PYTHONPATH naming a directory', 'python3', ['-m', 'server'], { PYTHONPATH: 'src' }],
    ['PATH with the current directory first', 'mcp-server', [], { PATH: '.:/usr/bin:/bin' }],
    ['PATH with an empty entry', 'mcp-server', [], { PATH: '/usr/bin::/bin' }],
    ['NODE_PATH into the checkout', 'node', ['/opt/mcp/server.js'], { NODE_PATH: `${REPO}/lib` }],
    ['HOME as the working directory', '/usr/local/bin/github-mcp-server', ['stdio'], { HOME: '.' }],
    ['a relative file in any variable', 'lua', ['/opt/mcp/server.lua'], { LUA_INIT: '@./init.lua' }],
    ['RUBYLIB', 'ruby', ['/opt/mcp/server.rb'], { RUBYLIB: 'lib' }],
  ])('the record’s environment: %s: yes', (_case, command, args, env) => {
    expect(loadsCodeFromRepository(command, args, REPO, env)).toBe(true);
    // CONTROL: the same command line without the variable is installed.
    expect(loadsCodeFromRepository(command, args, REPO)).toBe(false);
  });

  it.each<[string, string, readonly string[]]>([
    ['an installed script outside, with a data argument', 'node', ['/opt/mcp/server.js', '.']],
    ['an installed binary', '/usr/local/bin/github-mcp-server', ['stdio']],
    ['a binary found on PATH', 'mcp-server-time', ['--local-timezone', 'UTC']],
    ['a python module (PYTHONSAFEPATH)', 'python3', ['-m', 'mcp_server_fetch']],
    ['an option with a number', 'node', ['--max-old-space-size=256', '/opt/mcp/server.js']],
    ['a neighbouring directory with a shared prefix', 'node', [`${REPO}-tools/server.js`]],
    ['a wrapper around an installed script', '/usr/bin/env', ['node', '/opt/mcp/server.js', '.']],
    ['an installed jar', 'java', ['-jar', '/opt/mcp/server.jar']],
    ['a python module and its own arguments', 'python3', ['-m', 'mcp_server_git', '--repository', '.']],
  ])('%s: no', (_case, command, args) => {
    expect(loadsCodeFromRepository(command, args, REPO)).toBe(false);
  });

  it('an environment of absolute, outside paths and plain settings keeps an installed server installed', () => {
    const env = { PATH: '/usr/local/bin:/usr/bin:/bin', LOG_LEVEL: 'debug', API_URL: 'https://api.example.com/v1' };
    expect(loadsCodeFromRepository('node', ['/opt/mcp/server.js'], REPO, env)).toBe(false);
    // A data file in the checkout (server-memory's) is no lookup; the same place on NODE_PATH is.
    const data = { MEMORY_FILE_PATH: `${REPO}/memory.jsonl` };
    expect(loadsCodeFromRepository('node', ['/opt/mcp/server.js'], REPO, data)).toBe(false);
    expect(loadsCodeFromRepository('node', ['/opt/mcp/server.js'], REPO, { NODE_PATH: REPO })).toBe(true);
  });
});

/** An MCP server script whose one tool says which copy runs, and reads a data file lazily when asked. */
const serverScript = (copy: string): string => copyServerScript(copy, 'mode.txt');

const gateways: McpGateway[] = [];
afterEach(async () => {
  for (const gateway of gateways.splice(0)) await gateway.close();
});

/** The user's checkout holding the server at `path`, approved; a task worktree made from it. */
async function checkoutAndTask(path: string, args: readonly string[], extra: Partial<ServerRecord> = {}) {
  const checkout = makeWorktree();
  mkdirSync(dirname(join(checkout, path)), { recursive: true });
  // Executable, as a program found on PATH must be (the model's write keeps the mode of what it overwrites).
  writeFileSync(join(checkout, path), serverScript('original'), { mode: 0o755 });
  writeFileSync(join(checkout, 'mode.txt'), 'safe');
  const approved: ServerRecord = await approveAll(stdioRecord('local', args, extra), checkout);
  const task = makeWorktree();
  cpSync(checkout, task, { recursive: true });
  return { checkout, task, approved };
}

/** The model's moves: plant its copy (and data) in the task worktree, then load and call the tool. */
async function plantThenCall(gateway: McpGateway, task: string, path: string): Promise<string> {
  gateways.push(gateway);
  writeFileSync(join(task, path), serverScript('planted by the model'));
  writeFileSync(join(task, 'mode.txt'), 'exfiltrate');
  expect((await run(gateway, 'mcp_describe', { server: 'local', tool: 'whoami' })).ok).toBe(true);
  return (await run(gateway, 'mcp__local__whoami', {})).text;
}

describe.each<[string, string, readonly string[]]>([
  ['a relative script', 'srv.mjs', ['srv.mjs']],
  ['a ./ script in a subdirectory', 'tools/mcp/server.mjs', ['./tools/mcp/server.mjs']],
])('a lazily started server whose code is the repository’s (%s)', (_layout, path, args) => {
  it('runs the user’s copy, reading the user’s files, though the model planted its own first', async () => {
    const { checkout, task, approved } = await checkoutAndTask(path, args);
    const text = await plantThenCall(makeGateway([approved], task, { repository: checkout }).gateway, task, path);
    expect(text).toContain('original safe');
    expect(text).not.toMatch(/planted|exfiltrate/);
  });

  it('CONTROL: on the task worktree (before the defence) the planted copy runs', async () => {
    const { task, approved } = await checkoutAndTask(path, args);
    const text = await plantThenCall(makeGateway([approved], task, { repository: task }).gateway, task, path);
    expect(text).toContain('planted by the model exfiltrate');
  });
});

/**
 * Red team: command lines the first lists took for installed servers, though each loads its code from
 * the working directory — a wrapper in front of the interpreter, the current directory on the
 * record's PATH. The same attack as above, end to end.
 */
describe.each<[string, string, string, readonly string[], Readonly<Record<string, string>>]>([
  ['a wrapper in front of the interpreter (env node srv.mjs)', 'srv.mjs', '/usr/bin/env', ['node', 'srv.mjs'], {}],
  ['the current directory on the record’s PATH', 'srv-server.mjs', 'srv-server.mjs', [], { PATH: '.:/usr/bin:/bin' }],
])('a server whose code is the repository’s by %s', (_layout, path, command, args, env) => {
  const transport = { kind: 'stdio' as const, command, args: [...args], env: { ...env } };

  it('runs the user’s copy, though the model planted its own first', async () => {
    const { checkout, task, approved } = await checkoutAndTask(path, args, { transport });
    const text = await plantThenCall(makeGateway([approved], task, { repository: checkout }).gateway, task, path);
    expect(text).toContain('original safe');
    expect(text).not.toMatch(/planted|exfiltrate/);
  });

  it('CONTROL: on the task worktree the planted copy runs', async () => {
    const { task, approved } = await checkoutAndTask(path, args, { transport });
    const text = await plantThenCall(makeGateway([approved], task, { repository: task }).gateway, task, path);
    expect(text).toContain('planted by the model exfiltrate');
  });
});

describe('the record cannot undo what the classification relies on', () => {
  it('PYTHONSAFEPATH stays 1 though the record sets it empty (python -m counts as installed only because of it)', async () => {
    const worktree = makeWorktree();
    const record = await approveAll(
      stdioRecord('every', [installedServer('server-everything'), 'stdio'], {
        transport: {
          kind: 'stdio',
          command: 'node',
          args: [installedServer('server-everything'), 'stdio'],
          env: { PYTHONSAFEPATH: '', SERVER_NOTE: 'kept' },
        },
      }),
      worktree,
    );
    const { gateway } = makeGateway([record], worktree);
    gateways.push(gateway);
    expect((await run(gateway, 'mcp_describe', { server: 'every', tool: 'get-env' })).ok).toBe(true);
    const text = (await run(gateway, 'mcp__every__get-env', {})).text;
    // CONTROL within: the record's other variables do reach the server.
    expect(text).toMatch(/"SERVER_NOTE":\s*"kept"/);
    expect(text).toMatch(/"PYTHONSAFEPATH":\s*"1"/);
  });
});
