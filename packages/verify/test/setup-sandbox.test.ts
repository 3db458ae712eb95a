/**
 * Attacks on the setup profile's network: a command in it reaches the
 * allowlisted registry origin and nothing else — not a server on the
 * host's loopback (by any spelling of the address), not another host name,
 * not the registry's host on another port, not a direct connection. Each
 * refusal has a control: the same target answers from the host, and
 * answers through the same proxy when it is the allowlisted origin.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSetupSandbox } from '../src/index.js';

const scratch = mkdtempSync(join(tmpdir(), 'crustcore-setup-attack-'));
let allowedServer: Server;
let forbiddenServer: Server;
let allowedPort = 0;
let forbiddenPort = 0;

function serve(body: string): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer((_request, response) => response.end(body));
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve({ server, port: typeof address === 'object' && address !== null ? address.port : 0 });
    });
  });
}

beforeAll(async () => {
  ({ server: allowedServer, port: allowedPort } = await serve('registry-ok'));
  ({ server: forbiddenServer, port: forbiddenPort } = await serve('host-secret'));
});
afterAll(() => {
  allowedServer.close();
  forbiddenServer.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** Runs inside the sandbox: tries each target and prints one JSON line of what answered. */
const PROBE = `
import { connect } from 'node:net';
const proxyPort = 8790;
function viaConnect(target) {
  return new Promise((resolve) => {
    const socket = connect(proxyPort, '127.0.0.1');
    let data = '';
    socket.on('error', (e) => resolve('error:' + e.code));
    socket.on('connect', () => socket.write('CONNECT ' + target + ' HTTP/1.1\\r\\nHost: ' + target + '\\r\\n\\r\\n'));
    socket.on('data', (chunk) => {
      data += chunk;
      if (data.startsWith('HTTP/1.1 200') && data.includes('\\r\\n\\r\\n') && !data.includes('GET-SENT')) {
        data += 'GET-SENT';
        socket.write('GET / HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n');
      }
    });
    socket.on('close', () => resolve(data.includes('registry-ok') ? 'registry-ok' : data.includes('host-secret') ? 'host-secret' : data.split('\\r\\n')[0]));
  });
}
function viaAbsolute(url) {
  return new Promise((resolve) => {
    const socket = connect(proxyPort, '127.0.0.1');
    let data = '';
    socket.on('error', (e) => resolve('error:' + e.code));
    socket.on('connect', () => socket.write('GET ' + url + ' HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n'));
    socket.on('data', (chunk) => { data += chunk; });
    socket.on('close', () => resolve(data.includes('host-secret') ? 'host-secret' : data.includes('registry-ok') ? 'registry-ok' : data.split('\\r\\n')[0]));
  });
}
function direct(host, port) {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    socket.setTimeout(3000, () => { socket.destroy(); resolve('timeout'); });
    socket.on('error', (e) => resolve('error:' + e.code));
    socket.on('connect', () => { socket.destroy(); resolve('connected'); });
  });
}
const [allowed, forbidden] = process.argv.slice(2).map(Number);
const out = {
  allowed: await viaConnect('127.0.0.1:' + allowed),
  loopbackIp: await viaConnect('127.0.0.1:' + forbidden),
  loopbackName: await viaConnect('localhost:' + forbidden),
  loopbackV6: await viaConnect('[::1]:' + forbidden),
  loopbackShort: await viaConnect('127.1:' + forbidden),
  loopbackHex: await viaConnect('0x7f000001:' + forbidden),
  otherHost: await viaConnect('example.com:443'),
  suffixHost: await viaConnect('127.0.0.1.nip.io:' + allowed),
  allowedHostOtherPort: await viaConnect('127.0.0.1:' + (allowed === 1 ? 2 : allowed - 1)),
  absoluteForm: await viaAbsolute('http://127.0.0.1:' + forbidden + '/'),
  directLoopback: await direct('127.0.0.1', forbidden),
  directRegistry: await direct('registry.npmjs.org', 443),
};
console.log(JSON.stringify(out));
`;

async function probe(registryUrl: string): Promise<Record<string, string>> {
  const treeDir = mkdtempSync(join(scratch, 'tree-'));
  writeFileSync(join(treeDir, 'probe.mjs'), PROBE);
  const ran = await runSetupSandbox({
    treeDir,
    argv: ['node', 'probe.mjs', String(allowedPort), String(forbiddenPort)],
    registryUrl,
    cacheDir: join(scratch, 'cache'),
    allowInstallScripts: false,
  });
  expect(ran.failure, ran.output).toBeNull();
  expect(ran.exitCode, ran.output).toBe(0);
  return JSON.parse(ran.stdout.trim().split('\n').pop() ?? '{}') as Record<string, string>;
}

describe('setup profile network', () => {
  it('reaches only the allowlisted registry origin', async () => {
    const seen = await probe(`http://127.0.0.1:${allowedPort}/`);
    expect(seen.allowed).toBe('registry-ok');
    for (const name of [
      'loopbackIp',
      'loopbackName',
      'loopbackV6',
      'loopbackShort',
      'loopbackHex',
      'otherHost',
      'suffixHost',
      'allowedHostOtherPort',
      'absoluteForm',
    ]) {
      expect(seen[name], name).toMatch(/^HTTP\/1\.1 403/);
    }
    // No route out of the sandbox's own network namespace, and no DNS.
    expect(seen.directLoopback).toMatch(/^error:/);
    expect(seen.directRegistry).toMatch(/^error:/);
  });

  it('control: the forbidden server answers from the host, and through the proxy once it is the registry', async () => {
    const fromHost = await fetch(`http://127.0.0.1:${forbiddenPort}/`).then((response) => response.text());
    expect(fromHost).toBe('host-secret');
    const seen = await probe(`http://127.0.0.1:${forbiddenPort}/`);
    expect(seen.loopbackIp).toBe('host-secret');
    expect(seen.absoluteForm).toBe('host-secret');
  });
});
