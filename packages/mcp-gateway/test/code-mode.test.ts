/**
 * Code mode (`mcp_code`): the model's script runs in a bubblewrap sandbox of its own and reaches the
 * approved tools only through the endpoint the gateway serves for that one call, against the real
 * fixture server and server-filesystem, each started by the sandbox runner. The gate is a recording
 * stand-in for the task's kernel (golden/mcp-code-mode.test.ts runs the real one).
 */
import { connect } from 'node:net';
import { join } from 'node:path';
import { onlyInsideWrappers, UNTRUSTED_OPEN } from '@crustcore/agent';
import { afterEach, describe, expect, it } from 'vitest';
import type { GatewayOptions, McpGateway, ServerRecord } from '../src/index.js';
import {
  approveAll,
  makeGateway,
  makeWorktree,
  recordingGate,
  run,
  serverScript,
  stdioRecord,
  workerCap,
} from './gateway-harness.js';

const open: McpGateway[] = [];
afterEach(async () => {
  for (const gateway of open.splice(0)) await gateway.close();
});

/** A gateway with code mode over `records`; `served` collects each script's socket path. */
function codeGateway(
  records: readonly ServerRecord[],
  worktree: string,
  refuse: string | null = null,
  extra: Partial<GatewayOptions> = {},
) {
  const { gate, calls } = recordingGate(refuse);
  const served: string[] = [];
  const made = makeGateway(records, worktree, {
    codeMode: { gate, workerCap, onServe: (socket) => served.push(socket) },
    ...extra,
  });
  open.push(made.gateway);
  return { ...made, calls, served };
}

/** The socket answers a connection, or says why not (ENOENT once the endpoint is gone). */
const connectable = (path: string): Promise<string> =>
  new Promise((resolve) => {
    const socket = connect(path, () => {
      socket.destroy();
      resolve('connected');
    });
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
  });

describe('mcp_code: a script against the approved tools', () => {
  it('reads a file through server-filesystem: one gated call, the output wrapped, the endpoint gone after', async () => {
    const worktree = makeWorktree({ 'notes.txt': 'alpha\nbeta\n' });
    const record = await approveAll(stdioRecord('files', [serverScript('server-filesystem'), worktree]), worktree);
    const { gateway, calls, served, starts } = codeGateway([record], worktree);
    expect(gateway.definitions().map((d) => d.name)).toEqual(['mcp_search', 'mcp_describe', 'mcp_code']);
    const script = [
      `const text = await tools.files.read_text_file({ path: ${JSON.stringify(join(worktree, 'notes.txt'))} });`,
      "console.log('lines:', text.trim().split('\\n').length);",
      'console.log(text);',
    ].join('\n');
    const result = await run(gateway, 'mcp_code', { script });
    expect(result.ok, result.text).toBe(true);
    expect(result.text).toMatch(/^the script finished; its output:\n/);
    expect(result.text).toContain('lines: 2');
    expect(onlyInsideWrappers(result.text, 'beta')).toBe(true);
    expect(result.text.split('\n')[1]?.startsWith(UNTRUSTED_OPEN)).toBe(true);
    expect(calls.map((call) => [call.tool, call.operation])).toEqual([
      [
        'mcp__files__read_text_file',
        { op: 'exec', argv: ['mcp', 'files', 'read_text_file'], cwd: '.', profile: 'mcp', recognizedRunner: false },
      ],
    ]);
    expect(starts).toEqual(['files']);
    expect(served).toHaveLength(1);
    expect(await connectable(served[0] as string)).toBe('ENOENT');
  });
});
