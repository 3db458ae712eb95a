/**
 * Attacks on the network: reach a server the test starts on the host's
 * 127.0.0.1, resolve DNS, open bash's /dev/tcp. All must fail inside; a
 * control connection from the host proves the server is really up.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mintSandboxExecCap, runSandboxed, type SandboxedResult } from '@crustcore/sandbox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const worktree = mkdtempSync(join(tmpdir(), 'crustcore-redteam-net-'));
let server: Server;
let port = 0;
let connections = 0;

async function attack(argv: [string, ...string[]]): Promise<SandboxedResult> {
  const cap = mintSandboxExecCap('build');
  if (cap._tag === 'Left') throw new Error(cap.left.message);
  const result = await runSandboxed(cap.right, { argv, worktreeRoot: worktree, cwd: worktree, timeoutMs: 20_000 });
  if (result._tag === 'Left') throw new Error(`refused: ${result.left.reason}: ${result.left.message}`);
  expect(result.right.backend).toBe('bubblewrap');
  return result.right;
}

beforeAll(async () => {
  server = createServer((socket) => {
    connections += 1;
    socket.end('HELLO-FROM-HOST\n');
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  port = address.port;
});

afterAll(async () => {
  await new Promise((closed) => server.close(closed));
  rmSync(worktree, { recursive: true, force: true });
});

describe('redteam: sandbox network', () => {
  it('control: the host server answers on 127.0.0.1', async () => {
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString();
      });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(reply).toBe('HELLO-FROM-HOST\n');
  });

  it('cannot connect to the host loopback server (refused)', async () => {
    const before = connections;
    const script = `const s=require('net').connect(${port},'127.0.0.1');s.on('data',d=>console.log('DATA',String(d)));s.on('error',e=>console.log('ERR',e.code));`;
    const result = await attack(['node', '-e', script]);
    expect(result.stdout.text).toContain('ERR ECONNREFUSED');
    expect(result.stdout.text).not.toContain('HELLO-FROM-HOST');
    expect(connections).toBe(before);
  });

  it('cannot resolve DNS', async () => {
    const script = "require('dns').lookup('example.com',(e,a)=>console.log(e?'ERR '+e.code:'ADDR '+a));";
    const result = await attack(['node', '-e', script]);
    expect(result.stdout.text).toMatch(/^ERR (ENOTFOUND|EAI_AGAIN)/);
    const python = await attack([
      'python3',
      '-c',
      "import socket\ntry:\n  print('ADDR', socket.gethostbyname('example.com'))\nexcept OSError as e:\n  print('ERR', type(e).__name__)",
    ]);
    expect(python.stdout.text).toMatch(/^ERR /);
  });

  it('cannot open bash /dev/tcp to the host or the outside', async () => {
    const before = connections;
    const result = await attack([
      'bash',
      '-c',
      `(exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3) 2>&1 || echo LOCAL-FAILED; (exec 3<>/dev/tcp/1.1.1.1/80) 2>&1 || echo OUTSIDE-FAILED`,
    ]);
    expect(result.stdout.text).toContain('LOCAL-FAILED');
    expect(result.stdout.text).toContain('OUTSIDE-FAILED');
    expect(result.stdout.text).not.toContain('HELLO-FROM-HOST');
    expect(connections).toBe(before);
  });

  it('sees only a loopback interface', async () => {
    const result = await attack(['cat', '/proc/net/dev']);
    const interfaces = result.stdout.text
      .split('\n')
      .slice(2)
      .map((line) => line.split(':')[0]?.trim())
      .filter((name) => name !== undefined && name !== '');
    expect(interfaces).toEqual(['lo']);
  });
});
