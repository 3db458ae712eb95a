/**
 * `crustcore mcp`: a stdio MCP server for IDEs and other agents.
 *
 *   crustcore mcp [--dir REPO]… [--verify ARGV] [--database-url URL | --ephemeral] [--state-dir DIR]
 *
 * Tools (frozen): create_task, stage_diff, verify, status, diff, approve,
 * apply, export. A model can propose and verify; approval needs a token that
 * a person mints with `crustcore mcp-token TASK`, which reaches this server
 * through its local admin socket (`<state-dir>/sockets/<pid>.sock`, 0600) —
 * no MCP tool can mint one. stdout carries only the protocol; diagnostics go
 * to stderr.
 *
 *   crustcore mcp-token TASK [--state-dir DIR | --socket PATH] [--json]
 */

import { readdirSync, realpathSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  type AdminReply,
  AdminSocketError,
  adminError,
  adminOk,
  callAdmin,
  loadStatePlane,
  mcpSocketDir,
  mcpStateDir,
  openState,
  StateOpenError,
  startAdminServer,
} from '@crustcore/daemon';
import type { Json } from '@crustcore/kernel';
import { loadRuntimeRedactor } from '@crustcore/runtime';
import type { Db } from '@crustcore/state';
import { type Argv, openRepository, splitArgv } from '@crustcore/verify';
import { type Command, UsageError } from '../cli/command.js';
import { asList, asRecord, text } from '../cli/daemon-client.js';
import { requireFullBuild } from '../cli/edition.js';
import { ExitCode } from '../cli/exit-codes.js';
import { type Io, writeLine } from '../cli/output.js';
import { crustcoreHome } from '../cli/paths.js';
import { mcpSpec, mcpTokenSpec } from './pack-specs.js';

declare const CRUSTCORE_VERSION: string;
const VERSION: string = typeof CRUSTCORE_VERSION === 'string' ? CRUSTCORE_VERSION : '0.0.0-dev';

type McpPack = typeof import('@crustcore/mcp');

async function loadMcpPack(): Promise<McpPack> {
  try {
    requireFullBuild('crustcore mcp');
    return await import('@crustcore/mcp');
  } catch (error) {
    throw new UsageError(
      `the MCP pack @crustcore/mcp is not installed here (${(error as Error).message.slice(0, 200)})`,
    );
  }
}

/**
 * A `Db` that opens in the background: the MCP handshake and tools/list are
 * answered at once while PGlite (seconds to start) comes up; the first tool
 * that needs the state plane waits for it.
 */
function backgroundDb(opening: Promise<Db>, engine: Db['engine'], pack: McpPack): Db {
  // A database that could not open is the caller's to hear about: who holds it and what to do.
  const ready = opening.catch((error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    throw new pack.StatePlaneUnavailable(message, /\bin use\b/.test(message));
  });
  ready.catch(() => undefined);
  return {
    engine,
    schema: 'crustcore',
    query: async (sql, params) => (await ready).query(sql, params),
    transaction: async (work) => (await ready).transaction(work),
    close: async () => {
      const db = await opening.catch(() => null);
      await db?.close();
    },
  };
}

function repositoryRoots(io: Io, dirs: readonly string[] | undefined): string[] {
  const given = dirs !== undefined && dirs.length > 0 ? dirs : ['.'];
  return given.map((dir) => {
    try {
      const real = realpathSync(resolve(io.cwd, dir));
      if (!statSync(real).isDirectory()) throw new Error('not a directory');
      return real;
    } catch {
      throw new UsageError(`--dir ${dir}: no such directory`);
    }
  });
}

/** The admin socket's answers: a person's `crustcore mcp-token` reaches the service only here. */
function adminHandler(
  service: InstanceType<McpPack['McpService']>,
): (request: { readonly op: string; readonly taskId?: string }) => Promise<AdminReply> {
  return async (request) => {
    if (request.op === 'mcp-describe' && request.taskId !== undefined)
      return adminOk(await service.describeTask(request.taskId));
    if (request.op === 'mcp-token' && request.taskId !== undefined) {
      const issued = await service.issueApprovalToken(request.taskId);
      return issued._tag === 'Right'
        ? adminOk(issued.right)
        : adminError('refused', `${issued.left.code}: ${issued.left.message}`);
    }
    return adminError('unsupported', 'this is an MCP server socket: it answers mcp-describe and mcp-token only');
  };
}

export const mcpCommand: Command = {
  ...mcpSpec,
  async run(args, io) {
    const { values } = parseArgs({
      args: [...args],
      options: {
        dir: { type: 'string', multiple: true },
        verify: { type: 'string' },
        'database-url': { type: 'string' },
        ephemeral: { type: 'boolean', default: false },
        'state-dir': { type: 'string' },
        'verify-timeout': { type: 'string' },
      },
      strict: true,
    });
    const roots = repositoryRoots(io, values.dir);
    let verifyArgv: Argv | undefined;
    if (values.verify !== undefined) {
      const split = splitArgv(values.verify);
      if (split._tag === 'Left') throw new UsageError(`--verify: ${split.left.message}`);
      verifyArgv = split.right;
    }
    const verifyTimeoutSeconds = values['verify-timeout'] === undefined ? 900 : Number(values['verify-timeout']);
    if (!Number.isSafeInteger(verifyTimeoutSeconds) || verifyTimeoutSeconds < 1 || verifyTimeoutSeconds > 86_400)
      throw new UsageError('--verify-timeout takes 1–86400 seconds');
    const databaseUrl = values['database-url'] ?? (io.env.CRUSTCORE_DATABASE_URL || undefined);
    if (databaseUrl !== undefined && values.ephemeral === true)
      throw new UsageError('give --database-url or --ephemeral, not both');
    const home = crustcoreHome(io.env);
    const pack = await loadMcpPack();
    // Given: the person chose it (a second server on it is told the database is in use). Default: a
    // slot of the project's state that this server holds, so two IDE windows on one repository both work.
    const slot = values['state-dir'] === undefined ? pack.claimStateSlot(await projectStateDir(home, roots)) : null;
    if (slot !== null && slot._tag === 'Full') {
      writeLine(io.stderr, `${io.err.red('error:')} ${slot.message}`);
      return ExitCode.busy;
    }
    const stateDir = slot === null ? mcpStateDir(home, values['state-dir'], io.cwd) : slot.slot.dir;
    try {
      return await serveMcp({ io, pack, values, roots, verifyArgv, verifyTimeoutSeconds, databaseUrl, home, stateDir });
    } finally {
      slot?.slot.release();
    }
  },
};

interface ServeOptions {
  readonly io: Io;
  readonly pack: McpPack;
  readonly values: { readonly ephemeral?: boolean; readonly 'state-dir'?: string };
  readonly roots: readonly string[];
  readonly verifyArgv: Argv | undefined;
  readonly verifyTimeoutSeconds: number;
  readonly databaseUrl: string | undefined;
  readonly home: string;
  readonly stateDir: string;
}

/** The state plane, opening in the background (PGlite takes seconds; the handshake does not wait). */
function stateDb(options: ServeOptions): Db {
  const { io, pack, values, databaseUrl, stateDir } = options;
  const opening: Promise<Db> =
    values.ephemeral === true
      ? loadStatePlane().then(async (state) => {
          const opened = await state.openStateDb({});
          if (opened._tag === 'Left')
            throw new StateOpenError(`cannot open the state plane: ${JSON.stringify(opened.left)}`);
          return opened.right;
        })
      : openState({ databaseUrl, stateDir }).then((opened) => opened.db);
  opening.catch((error: unknown) =>
    writeLine(io.stderr, `crustcore mcp: ${error instanceof Error ? error.message : String(error)}`),
  );
  return backgroundDb(opening, databaseUrl === undefined ? 'pglite' : 'postgres', pack);
}

/** Finishes what a crash interrupted, in the background (the state plane may still be starting). */
function recoverInBackground(io: Io, service: InstanceType<McpPack['McpService']>): void {
  void service.recoverInterruptedApplies().then(
    (rolledBack) => {
      if (rolledBack.length > 0)
        writeLine(io.stderr, `crustcore mcp: rolled back interrupted applies ${rolledBack.join(', ')}`);
    },
    (error: unknown) =>
      writeLine(
        io.stderr,
        `crustcore mcp: apply recovery failed: ${error instanceof Error ? error.message : String(error)}`,
      ),
  );
}

/** Starts the admin socket and serves stdio until the client leaves. */
async function serveMcp(options: ServeOptions): Promise<ExitCode> {
  const { io, pack, values, roots, verifyArgv, verifyTimeoutSeconds, home, stateDir } = options;
  const db = stateDb(options);
  // What the tools return reaches a model, and what the ledger records is kept: the same redactor
  // as `crustcore run` (detectors, and the vault's secrets when it opens without a prompt).
  const { redact } = await loadRuntimeRedactor(home, io.env);
  const service = new pack.McpService({
    db,
    home,
    env: io.env,
    redact,
    stateDir,
    allowedRoots: [...roots],
    verifyTimeoutMs: verifyTimeoutSeconds * 1_000,
    ...(verifyArgv === undefined ? {} : { verifyArgv }),
  });
  let admin: Awaited<ReturnType<typeof startAdminServer>>;
  try {
    admin = await startAdminServer(join(mcpSocketDir(stateDir), `${process.pid}.sock`), adminHandler(service));
  } catch (error) {
    await db.close();
    if (error instanceof AdminSocketError) {
      writeLine(io.stderr, `${io.err.red('error:')} ${error.message}`);
      return ExitCode.internal;
    }
    throw error;
  }
  writeLine(
    io.stderr,
    `crustcore mcp ${VERSION}: serving on stdio for ${roots.join(', ')}; approvals: crustcore mcp-token TASK${values['state-dir'] === undefined ? '' : ` --state-dir ${stateDir}`}`,
  );
  recoverInBackground(io, service);
  const server = pack.createMcpServer(service, { version: VERSION, redact });
  try {
    await pack.serveStdio(server);
  } finally {
    await admin.close();
    await service.close();
    await db.close();
  }
  return ExitCode.ok;
}

/**
 * The default state directory is per project ($CRUSTCORE_HOME/mcp/projects/<repo-id>, the
 * id the ledger uses): one embedded database per repository, so a second IDE session on
 * another repository does not find the first one's database locked.
 */
async function projectStateDir(home: string, roots: readonly string[]): Promise<string> {
  const first = roots[0];
  const repo = first === undefined ? null : await openRepository(first);
  // Not a repository (create_task will say so): the shared directory, as before.
  if (repo === null || repo._tag === 'Left') return join(home, 'mcp');
  return join(home, 'mcp', 'projects', repo.right.repoId);
}

/** Sockets of every MCP server under $CRUSTCORE_HOME/mcp: each project slot's, and the shared directory's slots. */
function allProjectSockets(home: string): string[] {
  const projects = join(home, 'mcp', 'projects');
  let names: string[] = [];
  try {
    names = readdirSync(projects).slice(0, 1_000);
  } catch {
    names = [];
  }
  // Outside a repository the shared directory is used, slotted like a project's (mcp, mcp~2, …).
  const shared = Array.from({ length: 16 }, (_, index) =>
    index === 0 ? join(home, 'mcp') : `${join(home, 'mcp')}~${index + 1}`,
  );
  return [...names.flatMap((name) => mcpSockets(join(projects, name))), ...shared.flatMap(mcpSockets)];
}

/** Every MCP server's socket under the state directory. */
function mcpSockets(stateDir: string): string[] {
  const dir = mcpSocketDir(stateDir);
  try {
    return readdirSync(dir)
      .filter((name) => /^\d+\.sock$/.test(name))
      .slice(0, 256)
      .map((name) => join(dir, name));
  } catch {
    return [];
  }
}

/** The server that should mint: the one that created the task, else one holding it verified. */
async function serverFor(sockets: readonly string[], taskId: string): Promise<string | null> {
  let fallback: string | null = null;
  for (const socket of sockets) {
    const answer = await callAdmin(socket, { op: 'mcp-describe', taskId }, { timeoutMs: 5_000 });
    if (answer._tag === 'Left' || !answer.right.ok) continue;
    const described = asRecord(answer.right.result);
    if (described.owned === true) return socket;
    if (described.known === true && (fallback === null || described.verified === true)) fallback = socket;
  }
  return fallback;
}

function printGrant(io: Io, grant: Record<string, Json>): void {
  const s = io.out;
  writeLine(io.stdout, s.bold(`Approve task ${text(grant.task_id)}: ${text(grant.goal)}`));
  writeLine(io.stdout, `  repository : ${text(grant.repository)} at ${text(grant.base_commit).slice(0, 12)}`);
  writeLine(
    io.stdout,
    `  verified   : ${asList(grant.verify_command).map(String).join(' ')} → exit 0 (${text(grant.tests_run)} tests)`,
  );
  writeLine(
    io.stdout,
    `  content    : staged ${text(grant.staged_hash).slice(0, 16)}…, patch ${text(grant.patch_sha256).slice(0, 16)}…`,
  );
  const risks = asList(grant.risks);
  if (risks.length > 0) writeLine(io.stdout, `  risks      : ${s.yellow(risks.map(String).join('; '))}`);
  for (const file of asList(grant.files)) {
    const f = asRecord(file);
    writeLine(io.stdout, `    ${text(f.status).padEnd(2)} ${text(f.path)}`);
  }
  if (typeof grant.diff === 'string') {
    for (const line of grant.diff.split('\n').slice(0, 200)) writeLine(io.stdout, `    ${line}`);
    if (grant.diff_truncated === true) writeLine(io.stdout, s.dim('    … (diff truncated; see crustcore diff)'));
  }
  writeLine(io.stdout, '');
  writeLine(
    io.stdout,
    `Give this one-time token to the assistant (valid until ${text(grant.expires_at)}, this content only):`,
  );
  writeLine(io.stdout, `  ${s.bold(text(grant.token))}`);
}

export const mcpTokenCommand: Command = {
  ...mcpTokenSpec,
  async run(args, io) {
    const { values, positionals } = parseArgs({
      args: [...args],
      options: {
        'state-dir': { type: 'string' },
        socket: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
      allowPositionals: true,
      strict: true,
    });
    const [taskId, ...extra] = positionals;
    if (taskId === undefined || extra.length > 0) throw new UsageError('mcp-token takes one task id');
    const home = crustcoreHome(io.env);
    const stateDir = mcpStateDir(home, values['state-dir'], io.cwd);
    const sockets =
      values.socket !== undefined
        ? [values.socket]
        : values['state-dir'] !== undefined
          ? mcpSockets(stateDir)
          : allProjectSockets(home);
    const json = values.json === true;
    const fail = (code: string, message: string, exit: ExitCode): ExitCode => {
      if (json) writeLine(io.stdout, JSON.stringify({ ok: false, error: { code, message } }));
      else writeLine(io.stderr, `${io.err.red('error:')} ${message}`);
      return exit;
    };
    const socket = await serverFor(sockets, taskId);
    if (socket === null) {
      return fail(
        'not-found',
        `no running MCP server under ${mcpSocketDir(stateDir)} knows task ${taskId} (is the IDE's "crustcore mcp" running with this --state-dir?)`,
        ExitCode.usage,
      );
    }
    const answer = await callAdmin(socket, { op: 'mcp-token', taskId });
    if (answer._tag === 'Left') return fail(answer.left._tag, answer.left.message, ExitCode.internal);
    if (!answer.right.ok) return fail(answer.right.error.code, answer.right.error.message, ExitCode.denied);
    const grant = asRecord(answer.right.result);
    if (json) writeLine(io.stdout, JSON.stringify({ ok: true, ...grant }));
    else printGrant(io, grant);
    return ExitCode.ok;
  },
};
