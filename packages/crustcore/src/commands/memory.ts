/**
 * `crustcore memory add|list|forget|search`: the repository's memory —
 * nuggets, conventions and decisions a person adds, and the failures (with
 * their verified fixes) CrustCore records after a task.
 *
 *   crustcore memory add [--kind nugget|convention|decision] [--tag T]… TEXT…
 *   crustcore memory list [--kind K] [--limit N]
 *   crustcore memory forget ID
 *   crustcore memory search QUERY…
 *   crustcore memory context QUERY…   (the bundle a task for this goal would get)
 *   crustcore memory learn            (failures + verified fixes from this repository's ledger)
 *   (each also [--dir DIR] [--database-url URL] [--json])
 *
 * Storage: the state plane — embedded PGlite in
 * `$CRUSTCORE_HOME/projects/<repo-id>/memory` by default, or the PostgreSQL
 * server of `--database-url` / CRUSTCORE_DATABASE_URL (rows keyed by the
 * repository id). Exit codes: 0 done; 2 bad input or an unknown id; 75 the
 * embedded store is in use by another process; 70 anything else.
 *
 * The memory pack is imported only when this command runs.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Memory, MemoryError, MemoryStore, RankedMemory } from '@crustcore/memory';
import { openRepository } from '@crustcore/verify';
import { type Command, UsageError } from '../cli/command.js';
import { requireFullBuild } from '../cli/edition.js';
import { ExitCode } from '../cli/exit-codes.js';
import { type Io, writeLine } from '../cli/output.js';
import { crustcoreHome } from '../cli/paths.js';
import { memorySpec } from './pack-specs.js';

type MemoryPack = typeof import('@crustcore/memory');

const OPTIONS = {
  dir: { type: 'string' },
  'database-url': { type: 'string' },
  kind: { type: 'string' },
  tag: { type: 'string', multiple: true },
  limit: { type: 'string' },
  json: { type: 'boolean', default: false },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

export async function loadMemoryPack(): Promise<MemoryPack> {
  try {
    requireFullBuild('crustcore memory');
    return await import('@crustcore/memory');
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(
      `the memory pack @crustcore/memory is not installed here (${(error as Error).message.slice(0, 200)})`,
    );
  }
}

/** Where a repository's embedded memory lives. */
export const memoryDataDir = (home: string, repoId: string): string => join(home, 'projects', repoId, 'memory');

async function repositoryId(io: Io, dir: string | undefined): Promise<string> {
  const repo = await openRepository(resolve(io.cwd, dir ?? '.'));
  if (repo._tag === 'Left') throw new UsageError(`--dir ${dir ?? '.'}: not a git repository (${repo.left.message})`);
  return repo.right.repoId;
}

const age = (m: Memory, nowMs: number): string => {
  const days = Math.floor(Math.max(0, nowMs - m.createdAtMs) / 86_400_000);
  return days === 0 ? 'today' : `${days}d ago`;
};

function printMemory(io: Io, m: Memory, nowMs: number, score?: number): void {
  const head = `${io.out.bold(m.id)}  ${m.kind.padEnd(10)} ${age(m, nowMs).padEnd(9)} ${m.source === 'person' ? '' : '(verifier) '}`;
  writeLine(io.stdout, `${head}${score === undefined ? '' : io.out.dim(`score ${score.toFixed(4)} `)}${m.body}`);
  if (m.fix !== null) writeLine(io.stdout, `    fix: ${m.fix}`);
  if (m.tags.length > 0) writeLine(io.stdout, io.out.dim(`    tags: ${m.tags.join(', ')}`));
}

function failWith(io: Io, pack: MemoryPack, error: MemoryError, json: boolean): ExitCode {
  const message = pack.describeMemoryError(error);
  if (json) writeLine(io.stdout, JSON.stringify({ ok: false, error: error._tag, message }));
  writeLine(io.stderr, `${io.err.red('error:')} ${message}`);
  return error._tag === 'MemoryStoreUnavailable' ? ExitCode.busy : ExitCode.usage;
}

function limitOf(values: Values): number | undefined {
  if (values.limit === undefined) return undefined;
  const limit = Number(values.limit);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError('--limit takes 1–10000');
  return limit;
}

function kindOf(pack: MemoryPack, values: Values): Memory['kind'] | undefined {
  if (values.kind === undefined) return undefined;
  if (!pack.isMemoryKind(values.kind)) throw new UsageError(`--kind: expected one of ${pack.MEMORY_KINDS.join(', ')}`);
  return values.kind;
}

type Store = MemoryStore;

/** A command line checked before any store opens: a bad one costs no PGlite start. */
interface Request {
  readonly action: 'add' | 'list' | 'forget' | 'search' | 'learn' | 'context';
  readonly text: string;
  readonly kind: Memory['kind'] | undefined;
  readonly limit: number | undefined;
  readonly tags: readonly string[];
  readonly json: boolean;
}

const ACTIONS = ['add', 'list', 'forget', 'search', 'learn', 'context'] as const;

function checkRequest(pack: MemoryPack, positionals: readonly string[], values: Values): Request {
  const [given, ...words] = positionals;
  const action = ACTIONS.find((name) => name === given);
  if (action === undefined) throw new UsageError(`expected ${ACTIONS.join(', ')}`);
  const text = words.join(' ');
  const request: Request = {
    action,
    text,
    kind: kindOf(pack, values),
    limit: limitOf(values),
    tags: values.tag ?? [],
    json: values.json === true,
  };
  if (action === 'add' && text.trim() === '') throw new UsageError('add needs the TEXT of the memory');
  if (action === 'add' && request.kind === 'failure')
    throw new UsageError('failure memories come from the verifier; add a nugget, convention or decision');
  if (action === 'forget' && words.length !== 1)
    throw new UsageError('give exactly one memory ID (see crustcore memory list)');
  if (action === 'list' && words.length > 0) throw new UsageError('list takes no text (use search QUERY)');
  if ((action === 'search' || action === 'context') && text.trim() === '')
    throw new UsageError(`${action} needs a QUERY`);
  if (action === 'learn' && words.length > 0) throw new UsageError('learn takes no text');
  return request;
}

async function act(
  request: Request,
  ctx: { io: Io; pack: MemoryPack; store: Store; repoId: string; nowMs: number },
): Promise<ExitCode> {
  const { io, pack, store, repoId, nowMs } = ctx;
  const { action, kind, limit, json } = request;
  if (action === 'add') {
    const added = await store.add(repoId, {
      kind: kind ?? 'nugget',
      body: request.text,
      tags: request.tags,
      source: 'person',
    });
    if (added._tag === 'Left') return failWith(io, pack, added.left, json);
    if (json)
      writeLine(io.stdout, JSON.stringify({ ok: true, created: added.right.created, memory: added.right.memory }));
    else writeLine(io.stdout, `${added.right.created ? 'remembered' : 'refreshed'} ${added.right.memory.id}`);
    return ExitCode.ok;
  }
  if (action === 'forget') {
    const forgotten = await store.forget(repoId, request.text);
    if (forgotten._tag === 'Left') return failWith(io, pack, forgotten.left, json);
    if (json) writeLine(io.stdout, JSON.stringify({ ok: true, forgotten: forgotten.right }));
    else writeLine(io.stdout, `forgot ${forgotten.right.id}`);
    return ExitCode.ok;
  }
  if (action === 'list') {
    const listed = await store.list(repoId, {
      ...(kind === undefined ? {} : { kind }),
      ...(limit === undefined ? {} : { limit }),
    });
    if (json) writeLine(io.stdout, JSON.stringify({ ok: true, memories: listed }));
    else if (listed.length === 0) writeLine(io.stdout, 'no memories yet (crustcore memory add TEXT)');
    else for (const m of listed) printMemory(io, m, nowMs);
    return ExitCode.ok;
  }
  if (action === 'learn') return learn(ctx, json);
  const found: RankedMemory[] = await store.search(repoId, request.text, {
    ...(kind === undefined ? {} : { kinds: [kind] }),
    ...(limit === undefined ? {} : { limit: Math.min(limit, 100) }),
  });
  if (action === 'context') {
    // Exactly what a task for this goal would be given (before the prompt builder fences it).
    const bundle = pack.selectContext({ memories: found, nowMs });
    if (json) writeLine(io.stdout, JSON.stringify({ ok: true, ...bundle }));
    else for (const o of bundle.observations) writeLine(io.stdout, `${io.out.bold(o.source)}\n${o.text}\n`);
    return ExitCode.ok;
  }
  if (json) writeLine(io.stdout, JSON.stringify({ ok: true, results: found, notes: store.capabilities.notes }));
  else for (const r of found) printMemory(io, r.memory, nowMs, r.score);
  return ExitCode.ok;
}

/** The post-task step: failures the verifier classified in this repository's ledger, with their verified fixes. */
async function learn(
  ctx: { io: Io; pack: MemoryPack; store: Store; repoId: string },
  json: boolean,
): Promise<ExitCode> {
  const logPath = join(crustcoreHome(ctx.io.env), 'projects', ctx.repoId, 'events.log');
  const frames = existsSync(logPath) ? ctx.pack.readLedgerFrames(logPath) : [];
  const report = await ctx.pack.learnFromLedger(ctx.store, ctx.repoId, frames);
  if (json) writeLine(ctx.io.stdout, JSON.stringify({ ok: true, ...report }));
  else
    writeLine(
      ctx.io.stdout,
      `${report.tasks} task(s) with verifier failures: ${report.added} new failure memories, ${report.refreshed} refreshed`,
    );
  return ExitCode.ok;
}

export const memoryCommand: Command = {
  ...memorySpec,
  async run(args, io) {
    const { values, positionals } = parseArgs({
      args: [...args],
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
    });
    const pack = await loadMemoryPack();
    const request = checkRequest(pack, positionals, values);
    const repoId = await repositoryId(io, values.dir);
    const databaseUrl = values['database-url'] ?? (io.env.CRUSTCORE_DATABASE_URL || undefined);
    const opened = await pack.openMemoryStore({
      clock: () => Date.now(),
      ...(databaseUrl === undefined ? { dataDir: memoryDataDir(crustcoreHome(io.env), repoId) } : { databaseUrl }),
    });
    if (opened._tag === 'Left') return failWith(io, pack, opened.left, request.json);
    const { store, db } = opened.right;
    try {
      for (const note of store.capabilities.notes)
        if (values.json !== true) writeLine(io.stderr, io.err.dim(`note: ${note}`));
      return await act(request, { io, pack, store, repoId, nowMs: Date.now() });
    } finally {
      await db.close();
    }
  },
};
