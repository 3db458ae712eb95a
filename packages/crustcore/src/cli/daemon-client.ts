/**
 * What the client commands (status, tasks, pause, resume, cancel, kill,
 * approve, deny) share: finding the daemon's socket, sending one request,
 * printing the reply for people or as JSON, and mapping errors to exit codes.
 */

import { type AdminErrorCode, adminSocketPath, callAdmin, daemonStateDir } from '@crustcore/daemon';
import type { Json } from '@crustcore/kernel';
import { escapeForPerson } from '@crustcore/verify';
import { ExitCode } from './exit-codes.js';
import { type Io, writeLine } from './output.js';
import { crustcoreHome } from './paths.js';

/** parseArgs options every client command accepts. */
export const CLIENT_OPTIONS = {
  'state-dir': { type: 'string' },
  socket: { type: 'string' },
  json: { type: 'boolean', default: false },
} as const;

export function socketOf(io: Io, values: { readonly 'state-dir'?: string; readonly socket?: string }): string {
  if (values.socket !== undefined) return values.socket;
  return adminSocketPath(daemonStateDir(crustcoreHome(io.env), values['state-dir'], io.cwd));
}

const EXIT_FOR_ERROR: Readonly<Record<AdminErrorCode, ExitCode>> = {
  'bad-json': ExitCode.usage,
  'bad-request': ExitCode.usage,
  'too-large': ExitCode.usage,
  unsupported: ExitCode.usage,
  'not-found': ExitCode.usage,
  conflict: ExitCode.denied,
  refused: ExitCode.denied,
  internal: ExitCode.internal,
};

export type AdminAnswer =
  | { readonly _tag: 'Right'; readonly right: Json }
  | { readonly _tag: 'Left'; readonly left: ExitCode };

/** Sends one request; prints any failure (as JSON with --json) and returns its exit code. */
export async function askDaemon(
  io: Io,
  socketPath: string,
  request: Readonly<Record<string, unknown>>,
  json: boolean,
): Promise<AdminAnswer> {
  const called = await callAdmin(socketPath, request);
  if (called._tag === 'Left') {
    if (json)
      writeLine(
        io.stdout,
        JSON.stringify({ ok: false, error: { code: called.left._tag, message: called.left.message } }),
      );
    else writeLine(io.stderr, `${io.err.red('error:')} ${called.left.message}`);
    return { _tag: 'Left', left: ExitCode.internal };
  }
  const reply = called.right;
  if (!reply.ok) {
    if (json) writeLine(io.stdout, JSON.stringify({ ok: false, error: reply.error }));
    else writeLine(io.stderr, `${io.err.red('error:')} ${reply.error.message} (${reply.error.code})`);
    return { _tag: 'Left', left: EXIT_FOR_ERROR[reply.error.code] };
  }
  return { _tag: 'Right', right: reply.result };
}

export const asRecord = (value: Json | undefined): Record<string, Json> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, Json>) : {};

export const asList = (value: Json | undefined): readonly Json[] => (Array.isArray(value) ? value : []);

/** A value the daemon sent, safe to print: whatever the daemon relays (goals, names, diffs) is escaped here too. */
export const text = (value: Json | undefined): string =>
  value === null || value === undefined ? '—' : escapeForPerson(String(value));
