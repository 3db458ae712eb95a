/**
 * Helpers for tests that drive `crustcore mcp` as an IDE does (the official
 * SDK client over stdio) and read what it left in the repository's ledger:
 * the frames (through the ledger's own export) and `crustcore inspect`.
 */
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { exportJsonl } from '@crustcore/ledger';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { REPO_ROOT } from './cli-harness.js';
import { CLI_ARGS, type CliResult, cli } from './daemon-harness.js';

export const NODE_MODULES = resolve(import.meta.dirname, '../node_modules');
export const FILESYSTEM_SERVER = join(NODE_MODULES, '@modelcontextprotocol/server-filesystem/dist/index.js');

/**
 * The real server-filesystem registered as a user would (`crustcore mcp add files … -- node …/index.js .`,
 * any repository, the tools' policy), then approved unless `approve` is false. Fails the test when
 * either command does.
 */
export function registerFilesServer(
  env: NodeJS.ProcessEnv,
  options: { readonly policy?: 'allow' | 'ask'; readonly approve?: boolean } = {},
): void {
  const added = cli(env, [
    'mcp',
    'add',
    'files',
    '--any-repo',
    '--policy',
    options.policy ?? 'allow',
    '--read-path',
    NODE_MODULES,
    '--',
    'node',
    FILESYSTEM_SERVER,
    '.',
  ]);
  if (added.status !== 0) throw new Error(`crustcore mcp add failed: ${added.stdout}${added.stderr}`);
  if (options.approve === false) return;
  const approved = cli(env, ['mcp', 'approve', 'files', '--yes']);
  if (approved.status !== 0) throw new Error(`crustcore mcp approve failed: ${approved.stdout}${approved.stderr}`);
}

export interface CallOutcome {
  readonly isError: boolean;
  readonly text: string;
  readonly json: Record<string, unknown> | null;
}

export interface McpSession {
  readonly client: Client;
  call(name: string, args: Record<string, unknown>): Promise<CallOutcome>;
  stderr(): string;
}

export async function startMcp(env: NodeJS.ProcessEnv, args: readonly string[]): Promise<McpSession> {
  let stderr = '';
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...CLI_ARGS, 'mcp', ...args],
    env: env as Record<string, string>,
    cwd: REPO_ROOT,
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const client = new Client({ name: 'crustcore-golden', version: '1.0.0' });
  await client.connect(transport, { timeout: 120_000 });
  const call = async (name: string, callArgs: Record<string, unknown>): Promise<CallOutcome> => {
    const result = await client.callTool({ name, arguments: callArgs }, undefined, { timeout: 180_000 });
    const text = ((result.content ?? []) as { text?: string }[]).map((part) => part.text ?? '').join('');
    let json: Record<string, unknown> | null = null;
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      json = null;
    }
    return { isError: result.isError === true, text, json };
  };
  return { client, call, stderr: () => stderr };
}

/** `crustcore mcp-token TASK --json`, as a person runs it. */
export const mintToken = (env: NodeJS.ProcessEnv, taskId: string, stateDir: string): CliResult =>
  cli(env, ['mcp-token', taskId, '--state-dir', stateDir, '--json']);

/** The one ledger directory under $CRUSTCORE_HOME/projects (the tests use one repository per home). */
export function ledgerDirOf(home: string): string {
  const projects = join(home, 'projects');
  const names = readdirSync(projects);
  if (names.length !== 1) throw new Error(`expected one project ledger under ${projects}, found ${names.join(', ')}`);
  return join(projects, names[0] as string);
}

export interface Frame {
  readonly kind: string;
  readonly payload?: unknown;
}

export function framesOf(ledgerDir: string): Frame[] {
  const frames: Frame[] = [];
  exportJsonl({ logPath: join(ledgerDir, 'events.log'), redacted: false }, (line) => frames.push(JSON.parse(line)));
  return frames;
}

interface RejectedAnswer {
  readonly reason: string;
  readonly eventKind: string;
  readonly taskId: string | null;
}

/** Every Rejected answer the kernel recorded for `taskId`. */
export function rejectedFor(frames: readonly Frame[], taskId: string): RejectedAnswer[] {
  return frames
    .filter((f) => f.kind === 'kernel.actions')
    .flatMap((f) => (f.payload as { actions?: (RejectedAnswer & { kind: string })[] }).actions ?? [])
    .filter((a) => a.kind === 'Rejected' && a.taskId === taskId)
    .map((a) => ({ reason: a.reason, eventKind: a.eventKind, taskId: a.taskId }));
}

/** Kernel event kinds recorded for `taskId`, in order. */
export function eventKindsFor(frames: readonly Frame[], taskId: string): string[] {
  return frames
    .filter((f) => (f.payload as { taskId?: unknown } | undefined)?.taskId === taskId && !f.kind.includes('.'))
    .map((f) => f.kind);
}

/** `crustcore inspect --dir LEDGER --replay --json`. */
export const inspectReplay = (env: NodeJS.ProcessEnv, ledgerDir: string): CliResult =>
  cli(env, ['inspect', '--dir', ledgerDir, '--replay', '--json']);
