/**
 * A throwaway PostgreSQL cluster for tests: initdb in a temp directory, start on
 * a free 127.0.0.1 port with fsync off, stop and delete afterwards.
 *
 * This file lives under test/ because it spawns processes, which only the
 * sandbox runner may do from packages' src/ (a dependency rule). Other
 * packages' tests import it as `@crustcore/state/testing`.
 *
 * initdb refuses to run as root, so as root every server command runs as the
 * `postgres` user through setpriv and the directory is chowned to it.
 */
import { execFile, spawnSync } from 'node:child_process';
import { accessSync, chownSync, constants, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

export interface ThrowawayCluster {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` (trust authentication, loopback only). */
  readonly databaseUrl: string;
  readonly port: number;
  readonly dataDir: string;
  readonly socketDir: string;
  /** Creates a database in this cluster and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (immediate mode) and deletes the directory. Idempotent. */
  stop(): Promise<void>;
}

export interface ThrowawayClusterOptions {
  /** Extra `-c name=value` server settings. */
  readonly settings?: Readonly<Record<string, string>>;
  /** Bound on initdb + start. */
  readonly timeoutMs?: number;
}

interface Binaries {
  readonly initdb: string;
  readonly pgCtl: string;
}

const isExecutable = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** PATH first, then /usr/local/bin, then the Debian layout (newest major first). */
export function findPostgresBinaries(): Binaries | null {
  const candidates = (process.env.PATH ?? '').split(delimiter).filter((dir) => dir !== '');
  candidates.push('/usr/local/bin');
  try {
    const versions = readdirSync('/usr/lib/postgresql')
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    for (const version of versions) candidates.push(`/usr/lib/postgresql/${version}/bin`);
  } catch {
    // No Debian layout on this machine; PATH may still have the binaries.
  }
  for (const dir of candidates) {
    const initdb = join(dir, 'initdb');
    const pgCtl = join(dir, 'pg_ctl');
    if (isExecutable(initdb) && isExecutable(pgCtl)) return { initdb, pgCtl };
  }
  return null;
}

interface RunAs {
  readonly uid: number;
  readonly gid: number;
  readonly prefix: readonly string[];
}

function postgresUser(): RunAs {
  if (process.getuid?.() !== 0) return { uid: -1, gid: -1, prefix: [] };
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'));
  if (line === undefined) throw new Error('running as root but there is no `postgres` user to run initdb as');
  const fields = line.split(':');
  return {
    uid: Number(fields[2]),
    gid: Number(fields[3]),
    prefix: ['setpriv', '--reuid=postgres', '--regid=postgres', '--init-groups', '--'],
  };
}

function run(argv: readonly string[], timeoutMs: number): Promise<string> {
  const [file, ...args] = argv;
  if (file === undefined) return Promise.reject(new Error('empty argv'));
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { timeout: timeoutMs, env: { ...process.env, LC_ALL: 'C', LANG: 'C' }, cwd: tmpdir() },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${argv.join(' ')} failed: ${error.message}\n${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const chownTree = (path: string, user: RunAs): void => {
  if (user.uid < 0) return;
  chownSync(path, user.uid, user.gid);
};

/** Starts a fresh cluster. Throws when PostgreSQL is not installed (tests must not silently pass). */
export async function startThrowawayCluster(options: ThrowawayClusterOptions = {}): Promise<ThrowawayCluster> {
  const binaries = findPostgresBinaries();
  if (binaries === null) {
    throw new Error(
      'PostgreSQL binaries (initdb, pg_ctl) not found on PATH, /usr/local/bin or /usr/lib/postgresql/*/bin',
    );
  }
  const timeoutMs = options.timeoutMs ?? 60_000;
  const user = postgresUser();
  const root = mkdtempSync(join(tmpdir(), 'crust-pg-'));
  const dataDir = join(root, 'data');
  const socketDir = root;
  chownTree(root, user);
  const as = (argv: readonly string[]): readonly string[] => [...user.prefix, ...argv];

  let stopped = false;
  const stopSync = (): void => {
    if (stopped) return;
    stopped = true;
    const [file, ...args] = as([binaries.pgCtl, '-D', dataDir, '-m', 'immediate', '-w', 'stop']);
    if (file !== undefined) spawnSync(file, args, { stdio: 'ignore', timeout: 30_000 });
    rmSync(root, { recursive: true, force: true });
  };
  // A crashed test run must not leave a server behind.
  process.once('exit', stopSync);

  try {
    await run(
      as([binaries.initdb, '-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']),
      timeoutMs,
    );
    const settings: Record<string, string> = {
      fsync: 'off',
      synchronous_commit: 'off',
      full_page_writes: 'off',
      max_connections: '200',
      ...options.settings,
    };
    const extra = Object.entries(settings)
      .map(([name, value]) => `-c ${name}=${value}`)
      .join(' ');
    let port = 0;
    let lastError: unknown = null;
    // The free-port probe can race with another process; retry a few ports.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      port = await freePort();
      try {
        await run(
          as([
            binaries.pgCtl,
            '-D',
            dataDir,
            '-l',
            join(root, 'server.log'),
            '-w',
            '-t',
            String(Math.ceil(timeoutMs / 1000)),
            '-o',
            `-c listen_addresses=127.0.0.1 -p ${port} -k ${socketDir} ${extra}`,
            'start',
          ]),
          timeoutMs,
        );
        lastError = null;
        break;
      } catch (error) {
        lastError = error;
      }
    }
    if (lastError !== null) throw lastError;
    const databaseUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
    return {
      databaseUrl,
      port,
      dataDir,
      socketDir,
      async createDatabase(name: string): Promise<string> {
        if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`bad database name ${name}`);
        const { default: postgres } = await import('postgres');
        const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
        try {
          await sql.unsafe(`CREATE DATABASE "${name}"`);
        } finally {
          await sql.end({ timeout: 5 });
        }
        return `postgres://postgres@127.0.0.1:${port}/${name}`;
      },
      async stop(): Promise<void> {
        if (stopped) return;
        try {
          await run(as([binaries.pgCtl, '-D', dataDir, '-m', 'immediate', '-w', 'stop']), 30_000);
        } finally {
          stopped = true;
          process.removeListener('exit', stopSync);
          rmSync(root, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    stopSync();
    process.removeListener('exit', stopSync);
    throw error;
  }
}
