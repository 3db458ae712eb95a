/**
 * `crustcore mcp add|list|remove|import|approve` through the command table's
 * `mcp` row (the same dispatch the CLI uses), with a real registry file, a
 * real sandboxed fixture server for `approve`, and the server sub-command
 * left alone for anything else.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Io } from '../src/cli/output.js';
import { PACK_COMMANDS } from '../src/commands/pack-commands.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const FIXTURES = join(ROOT, 'packages/mcp-gateway/test/fixtures');
const FIXTURE = join(FIXTURES, 'fixture-server.mjs');
const plain = {
  bold: (s: string) => s,
  dim: (s: string) => s,
  red: (s: string) => s,
  green: (s: string) => s,
  yellow: (s: string) => s,
  cyan: (s: string) => s,
};

function session() {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'mcp-cli-')));
  const cwd = join(home, 'repo');
  mkdirSync(cwd);
  let out = '';
  let err = '';
  const run = async (args: readonly string[]) => {
    out = '';
    err = '';
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    stdout.on('data', (c) => (out += String(c)));
    stderr.on('data', (c) => (err += String(c)));
    const io: Io = {
      stdout,
      stderr,
      stdin: new PassThrough(),
      env: { CRUSTCORE_HOME: home },
      cwd,
      out: plain,
      err: plain,
    } as unknown as Io;
    const row = PACK_COMMANDS.find((command) => command.name === 'mcp');
    if (row === undefined) throw new Error('no mcp command');
    const code = await (await row.load()).run(args, io);
    return { code, out, err };
  };
  const registry = () => JSON.parse(readFileSync(join(home, 'mcp', 'servers.json'), 'utf8'));
  return { home, cwd, run, registry };
}

describe('crustcore mcp registry commands', () => {
  it('add, list, remove; a credential value is refused with the vault route', async () => {
    const s = session();
    const added = await s.run([
      'add',
      'fx',
      '--read-path',
      FIXTURES,
      '--read-path',
      join(ROOT, 'node_modules'),
      '--',
      'node',
      FIXTURE,
    ]);
    expect(added.code, added.err).toBe(0);
    expect(added.out).toContain('crustcore mcp approve fx');
    expect((await s.run(['list'])).out).toMatch(
      /fx\s+trusted\s+stdio\s+node .*fixture-server\.mjs[\s\S]*\(none approved\)/,
    );
    const leaked = await s.run([
      'add',
      'gh',
      '--env',
      'GITHUB_TOKEN=ghp_abcdefabcdefabcdefabcdefabcdefabcdef',
      '--',
      'node',
      'x.js',
    ]);
    expect(leaked.code).toBe(2);
    expect(leaked.err).toContain('crustcore secret set');
    expect(leaked.err).not.toContain('ghp_abcdef');
    await expect(
      s.run(['add', 'h', '--auth', 'Authorization=Bearer-xyz', '--url', 'http://127.0.0.1:9/mcp']),
    ).rejects.toThrow(/secret:\/\/NAME/);
    expect((await s.run(['add', 'fx', '--', 'node', 'y.js'])).err).toMatch(/exists/);
    expect((await s.run(['remove', 'fx'])).code).toBe(0);
    expect(s.registry().servers).toEqual([]);
    expect((await s.run(['remove', 'fx'])).err).toMatch(/no server named fx/);
  });

  it("import --project: the repository's servers are untrusted and nothing starts", async () => {
    const s = session();
    const marker = join(s.home, 'started-by-import');
    writeFileSync(
      join(s.cwd, '.mcp.json'),
      JSON.stringify({
        mcpServers: { helper: { command: 'node', args: [FIXTURE], env: { FIXTURE_START_MARKER: marker } } },
      }),
    );
    const imported = await s.run(['import', '--project', s.cwd]);
    expect(imported.code, imported.err).toBe(0);
    expect(imported.out).toContain('untrusted');
    expect(
      s.registry().servers.map((r: { trust: string; repositories: string[] }) => [r.trust, r.repositories]),
    ).toEqual([['untrusted', [s.cwd]]]);
    expect(existsSync(marker)).toBe(false);
  });

  it('approve shows the definitions and pins them only with --yes', async () => {
    const s = session();
    await s.run([
      'add',
      'fx',
      '--read-path',
      FIXTURES,
      '--read-path',
      join(ROOT, 'node_modules'),
      '--',
      'node',
      FIXTURE,
    ]);
    const shown = await s.run(['approve', 'fx']);
    expect(shown.code, shown.err).toBe(0);
    expect(shown.out).toContain('[new] greet (read-only hint)');
    expect(shown.out).toContain('Greets someone by name.');
    expect(s.registry().servers[0].tools).toEqual({});
    const pinned = await s.run(['approve', 'fx', '--yes']);
    expect(pinned.code, pinned.err).toBe(0);
    const tools = s.registry().servers[0].tools as Record<string, { policy: string; hash: string }>;
    expect(tools.greet?.policy).toBe('allow');
    expect(tools.retitle?.policy).toBe('ask');
    expect(tools.greet?.hash).toMatch(/^[0-9a-f]{64}$/);
    expect((await s.run(['approve', 'fx'])).out).toContain('[unchanged] greet');
  });

  it('anything else is still the MCP server command (a flag is not a registry word)', async () => {
    const s = session();
    // The server command's own parser answers (the registry would have said "expected one of add, …").
    await expect(s.run(['--no-such-flag'])).rejects.toThrow(/no-such-flag/);
    await expect(s.run(['bogus-word'])).rejects.not.toThrow(/expected one of add/);
  });
});

describe('run --backend native: the gateway only when a server is usable here', () => {
  it('no registry, or only untrusted servers: no gateway (no meta-tools); a trusted one: the two meta-tools (three with code mode)', async () => {
    const { registryGatewayFactory: mcpGatewayFactory } = await import('@crustcore/mcp-gateway');
    const s = session();
    expect(await mcpGatewayFactory({ home: s.home, env: {}, repository: s.cwd })).toBeUndefined();
    writeFileSync(
      join(s.cwd, '.mcp.json'),
      JSON.stringify({ mcpServers: { helper: { command: 'node', args: [FIXTURE] } } }),
    );
    await s.run(['import', '--project', s.cwd]);
    expect(await mcpGatewayFactory({ home: s.home, env: {}, repository: s.cwd })).toBeUndefined();
    await s.run(['add', 'fx', '--repo', s.cwd, '--', 'node', FIXTURE]);
    expect(await mcpGatewayFactory({ home: s.home, env: {}, repository: join(s.home, 'other') })).toBeUndefined();
    const factory = await mcpGatewayFactory({ home: s.home, env: {}, repository: s.cwd });
    expect(
      factory?.(s.cwd)
        .definitions()
        .map((d) => d.name),
    ).toEqual(['mcp_search', 'mcp_describe']);
    // With the task's gate and worker capability (run --backend native, chat): code mode's meta-tool too.
    const withCode = await mcpGatewayFactory({
      home: s.home,
      env: {},
      repository: s.cwd,
      gate: {} as never,
      workerCap: () => {
        throw new Error('not asked for until a script runs');
      },
    });
    expect(
      withCode?.(s.cwd)
        .definitions()
        .map((d) => d.name),
    ).toEqual(['mcp_search', 'mcp_describe', 'mcp_code']);
  });
});
