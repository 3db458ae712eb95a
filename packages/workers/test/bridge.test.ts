/**
 * The in-sandbox bridge script on its own (run on the host here; the
 * red-team and contract tests run it inside bubblewrap): it pipes TCP on
 * 127.0.0.1 to a Unix socket, starts the command as its child with the same
 * stdin and stdout, and exits with the child's status.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BRIDGE_SCRIPT_PATH } from '../src/index.js';

let scratch = '';
let socketPath = '';
let server: Server;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'cc-bridge-'));
  socketPath = join(scratch, 'model.sock');
  server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`socket saw ${req.method} ${req.url}`);
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(scratch, { recursive: true, force: true });
});

/** The bridge runs a child that must not block the test's event loop: spawn it asynchronously. */
function bridge(
  args: readonly string[],
  input = '',
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BRIDGE_SCRIPT_PATH, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.on('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(input);
  });
}

const port = 40000 + (process.pid % 20000);

describe('bridge.mjs', () => {
  it('carries HTTP from 127.0.0.1:PORT to the Unix socket and passes stdin and the exit status through', async () => {
    const childScript = [
      "let input = '';",
      "process.stdin.on('data', (c) => { input += c; });",
      "process.stdin.on('end', async () => {",
      `  const res = await fetch('http://127.0.0.1:${port}/v1/responses?x=1', { method: 'POST', body: '{}' });`,
      "  process.stdout.write((await res.text()) + ' | stdin: ' + input);",
      '  process.exit(3);',
      '});',
    ].join('\n');
    const result = await bridge(
      ['--listen', `127.0.0.1:${port}`, '--socket', socketPath, '--', process.execPath, '-e', childScript],
      'the prompt',
    );
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('socket saw POST /v1/responses?x=1 | stdin: the prompt');
    expect(result.status).toBe(3);
  });

  it('refuses to listen anywhere but loopback, and bad usage', () => {
    for (const args of [
      ['--listen', `0.0.0.0:${port}`, '--socket', socketPath, '--', 'true'],
      ['--listen', `127.0.0.1:${port}`, '--socket', 'relative.sock', '--', 'true'],
      ['--listen', `127.0.0.1:${port}`, '--socket', socketPath],
      ['--bogus', 'x', '--', 'true'],
    ]) {
      const result = spawnSync(process.execPath, [BRIDGE_SCRIPT_PATH, ...args], { encoding: 'utf8' });
      expect(result.status, args.join(' ')).toBe(64);
      expect(result.stderr).toMatch(/^crustcore-bridge: /);
    }
  });

  it('reports a command that cannot start', async () => {
    const result = await bridge(['--listen', `127.0.0.1:${port}`, '--socket', socketPath, '--', '/nonexistent/cli']);
    expect(result.status).toBe(127);
    expect(result.stderr).toContain('cannot start /nonexistent/cli');
  });
});
