/**
 * The registry a running task reads on every use: decoded again only when the file changed, and a
 * change is seen at the next read — a person's approval or revocation, whether the file was replaced
 * (writeRegistry's rename) or rewritten in place with the same size right after a read.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  approveTools,
  McpGateway,
  type RegistryFile,
  registryGatewayFactory,
  registryPath,
  type ServerRecord,
  type ToolPolicy,
  writeRegistry,
} from '../src/index.js';
import { RegistryReader, SETTLE_MS } from '../src/registry/registry-reader.js';

const GREET = { name: 'greet', description: 'Greets someone by name.', inputSchema: { type: 'object' } };

function registryWith(policy: ToolPolicy, timeoutMs = 30_000): RegistryFile {
  const record: ServerRecord = {
    name: 'fx',
    transport: { kind: 'stdio', command: 'node', args: ['server.js'], env: {} },
    trust: 'trusted',
    repositories: ['*'],
    defaultPolicy: 'allow',
    tools: {},
    network: false,
    timeoutMs,
    source: 'test',
  };
  return { version: 1, servers: [approveTools(record, [GREET], () => policy)] };
}

const written = (registry: RegistryFile): string => {
  const home = mkdtempSync(join(tmpdir(), 'mcp-reader-'));
  const path = registryPath(home);
  const wrote = writeRegistry(path, registry);
  if (wrote._tag === 'Left') throw new Error(wrote.left.message);
  return path;
};

const right = <T>(result: { _tag: 'Left' } | { _tag: 'Right'; right: T }): T => {
  if (result._tag === 'Left') throw new Error('expected a registry');
  return result.right;
};

describe('RegistryReader', () => {
  it('a settled, unchanged file is decoded once (the same object); CONTROL: a replaced file is read again', () => {
    const path = written(registryWith('allow'));
    // A clock well past the file's last change: the file has settled.
    const reader = new RegistryReader(path, () => Date.now() + 10 * SETTLE_MS);
    const first = right(reader.read());
    expect(right(reader.read())).toBe(first);
    expect(writeRegistry(path, registryWith('deny'))._tag).toBe('Right');
    const second = right(reader.read());
    expect(second).not.toBe(first);
    expect(second.servers[0]?.tools.greet?.policy).toBe('deny');
  });

  it('a same-size rewrite in place right after a read is seen: an unsettled file is compared byte for byte', () => {
    const path = written(registryWith('allow', 30_000));
    const reader = new RegistryReader(path);
    expect(right(reader.read()).servers[0]?.timeoutMs).toBe(30_000);
    const before = readFileSync(path, 'utf8');
    const after = before.replace('"timeoutMs": 30000', '"timeoutMs": 30001');
    expect(after.length).toBe(before.length);
    expect(after).not.toBe(before);
    writeFileSync(path, after);
    expect(right(reader.read()).servers[0]?.timeoutMs).toBe(30_001);
    // Unchanged bytes: the decoded registry is kept, not decoded again.
    const kept = right(reader.read());
    expect(right(reader.read())).toBe(kept);
  });

  it('a missing file is the empty registry; a broken one is an error', () => {
    const path = written(registryWith('allow'));
    const reader = new RegistryReader(path);
    writeFileSync(path, '{ not json');
    expect(reader.read()._tag).toBe('Left');
    const missing = new RegistryReader(join(path, '..', 'nothing.json'));
    expect(right(missing.read()).servers).toEqual([]);
  });

  it("a running task's gateway sees a revocation at the next lookup; CONTROL: before it, the approval", async () => {
    const path = written(registryWith('allow'));
    const home = join(path, '..', '..');
    const factory = await registryGatewayFactory({ home, env: {}, repository: '/nowhere' });
    const gateway = factory?.('/nowhere');
    if (!(gateway instanceof McpGateway)) throw new Error('no gateway');
    expect(gateway.record('fx')?.tools.greet?.policy).toBe('allow');
    expect(writeRegistry(path, registryWith('deny'))._tag).toBe('Right');
    expect(gateway.record('fx')?.tools.greet?.policy).toBe('deny');
    await gateway.close();
  });
});
