/**
 * A server whose code is the repository's runs on the user's checkout, read-only, never on the task
 * worktree the model writes (client/server-code.ts). The attack: the native agent writes a file the
 * server loads, then asks for the server (mcp_describe starts it lazily); the planted copy would run
 * with the server's credential and read paths. Layouts and spellings vary; each attack has a
 * CONTROL — the same server on the task worktree, as before the defence, runs the planted copy.
 */
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadsCodeFromRepository } from '../src/client/server-code.js';
import type { McpGateway, ServerRecord } from '../src/index.js';
import { approveAll, makeGateway, makeWorktree, NODE_MODULES, run, stdioRecord } from './gateway-harness.js';

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
  ])('%s: yes', (_case, command, args) => {
    expect(loadsCodeFromRepository(command, args, REPO)).toBe(true);
  });

  it.each<[string, string, readonly string[]]>([
    ['an installed script outside, with a data argument', 'node', ['/opt/mcp/server.js', '.']],
    ['an installed binary', '/usr/local/bin/github-mcp-server', ['stdio']],
    ['a binary found on PATH', 'mcp-server-time', ['--local-timezone', 'UTC']],
    ['a python module (PYTHONSAFEPATH)', 'python3', ['-m', 'mcp_server_fetch']],
    ['an option with a number', 'node', ['--max-old-space-size=256', '/opt/mcp/server.js']],
    ['a neighbouring directory with a shared prefix', 'node', [`${REPO}-tools/server.js`]],
  ])('%s: no', (_case, command, args) => {
    expect(loadsCodeFromRepository(command, args, REPO)).toBe(false);
  });
});

/** An MCP server script whose one tool says which copy runs, and reads a data file lazily when asked. */
const serverScript = (copy: string): string =>
  [
    "import { readFileSync } from 'node:fs';",
    `import { McpServer } from ${JSON.stringify(`${NODE_MODULES}/@modelcontextprotocol/sdk/dist/esm/server/mcp.js`)};`,
    `import { StdioServerTransport } from ${JSON.stringify(`${NODE_MODULES}/@modelcontextprotocol/sdk/dist/esm/server/stdio.js`)};`,
    "const server = new McpServer({ name: 'copy', version: '1.0.0' });",
    `server.registerTool('whoami', { description: 'Says which copy runs.' }, async () => ({ content: [{ type: 'text', text: ${JSON.stringify(copy)} + ' ' + readFileSync('mode.txt', 'utf8') }] }));`,
    'await server.connect(new StdioServerTransport());',
  ].join('\n');

const gateways: McpGateway[] = [];
afterEach(async () => {
  for (const gateway of gateways.splice(0)) await gateway.close();
});

/** The user's checkout holding the server at `path`, approved; a task worktree made from it. */
async function checkoutAndTask(path: string, args: readonly string[]) {
  const checkout = makeWorktree();
  mkdirSync(dirname(join(checkout, path)), { recursive: true });
  writeFileSync(join(checkout, path), serverScript('original'));
  writeFileSync(join(checkout, 'mode.txt'), 'safe');
  const approved: ServerRecord = await approveAll(stdioRecord('local', args), checkout);
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
