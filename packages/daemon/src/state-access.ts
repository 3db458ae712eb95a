/**
 * Opening the state plane from a command. `@crustcore/state` (and PGlite
 * with it) is imported here, on demand, so commands that never touch the
 * state plane never load it — the nano bundle keeps it external.
 */
import { mkdirSync } from 'node:fs';
import type { Db } from '@crustcore/state';
import { pgliteDataDir } from './paths.js';
import type { StatePlane } from './supervisor.js';

export class StateOpenError extends Error {
  override readonly name = 'StateOpenError';
}

export async function loadStatePlane(): Promise<StatePlane> {
  try {
    return await import('@crustcore/state');
  } catch (error) {
    throw new StateOpenError(
      `the state plane pack @crustcore/state is not installed here (${(error as Error).message.slice(0, 200)})`,
    );
  }
}

export interface OpenedState {
  readonly state: StatePlane;
  readonly db: Db;
}

/**
 * PostgreSQL when a URL is given (shared by many processes and hosts);
 * otherwise embedded PGlite in `<stateDir>/pglite`, which one process at a
 * time may open.
 */
export async function openState(options: {
  readonly databaseUrl: string | undefined;
  readonly stateDir: string;
}): Promise<OpenedState> {
  const state = await loadStatePlane();
  let opened: Awaited<ReturnType<StatePlane['openStateDb']>>;
  if (options.databaseUrl !== undefined) {
    opened = await state.openStateDb({ databaseUrl: options.databaseUrl });
  } else {
    mkdirSync(options.stateDir, { recursive: true, mode: 0o700 });
    opened = await state.openStateDb({ dataDir: pgliteDataDir(options.stateDir) });
  }
  if (opened._tag === 'Left') {
    const e = opened.left;
    if (e._tag === 'DataDirLocked') {
      throw new StateOpenError(
        `the embedded database in ${options.stateDir} is in use by pid ${e.holderPid} on ${e.holderHost} ` +
          '(a running daemon or MCP server); talk to it through its socket, or use --database-url / another --state-dir',
      );
    }
    throw new StateOpenError(`cannot open the state plane: ${JSON.stringify(e)}`);
  }
  return { state, db: opened.right };
}
