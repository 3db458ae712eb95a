/**
 * A recorded trajectory: for each model turn, the events the provider
 * produced and (optionally) a fingerprint of what the turn was asked — the
 * hash of the request's last user or tool message. Stored as JSON, read back
 * through io-ts; the file is untrusted input like any other.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import { err, hashJson, type Json, ok, type Result } from '@crustcore/kernel';
import * as t from 'io-ts';
import { decode, parseJson } from '../decode.js';
import type { StreamEvent } from '../events.js';
import { lastInputMessage, type ModelRequest } from '../request.js';
import { StreamEventCodec } from './event-codec.js';

// ─── model ────────────────────────────────────────────────────────────────

export interface TrajectoryTurn {
  readonly requestHash?: string;
  /** The model the turn was recorded against, for the reader's information. */
  readonly model?: string;
  readonly events: readonly StreamEvent[];
}

export interface Trajectory {
  readonly version: 1;
  readonly turns: readonly TrajectoryTurn[];
}

export interface TrajectoryError {
  readonly _tag: 'TrajectoryError';
  readonly message: string;
}

/** Bounds on a trajectory file: it is read whole into memory. */
export const MAX_TRAJECTORY_BYTES = 64 * 1024 * 1024;
export const MAX_TRAJECTORY_TURNS = 10_000;

const TurnCodec = t.intersection([
  t.type({ events: t.array(StreamEventCodec) }),
  t.partial({ requestHash: t.string, model: t.string }),
]);
export const TrajectoryCodec = t.type({ version: t.literal(1), turns: t.array(TurnCodec) });

// ─── constructors ─────────────────────────────────────────────────────────

/**
 * The fingerprint of a request: SHA-256 of the canonical JSON of its last
 * user or tool message (or of null when there is none). Deliberately narrow:
 * a system-prompt tweak or another tool order does not invalidate a recording.
 */
export const requestFingerprint = (request: ModelRequest): string =>
  hashJson((lastInputMessage(request) ?? null) as unknown as Json);

export function decodeTrajectory(value: unknown): Result<TrajectoryError, Trajectory> {
  const decoded = decode(TrajectoryCodec, value);
  if (decoded._tag === 'Left')
    return err({ _tag: 'TrajectoryError', message: `invalid trajectory: ${decoded.left.message}` });
  if (decoded.right.turns.length > MAX_TRAJECTORY_TURNS) {
    return err({ _tag: 'TrajectoryError', message: `trajectory has more than ${MAX_TRAJECTORY_TURNS} turns` });
  }
  return ok(decoded.right as Trajectory);
}

export async function readTrajectoryFile(path: string): Promise<Result<TrajectoryError, Trajectory>> {
  let text: string;
  try {
    const bytes = await readFile(path);
    if (bytes.byteLength > MAX_TRAJECTORY_BYTES) {
      return err({ _tag: 'TrajectoryError', message: `trajectory file exceeds ${MAX_TRAJECTORY_BYTES} bytes` });
    }
    text = bytes.toString('utf8');
  } catch (thrown) {
    const code = (thrown as { code?: string }).code ?? 'read error';
    return err({ _tag: 'TrajectoryError', message: `cannot read trajectory file: ${code}` });
  }
  const parsed = parseJson(text);
  if (parsed._tag === 'Left')
    return err({ _tag: 'TrajectoryError', message: `trajectory is not JSON: ${parsed.left.message}` });
  return decodeTrajectory(parsed.right);
}

/** Writes atomically (temp file, then rename) so a crash never leaves half a recording. */
export async function writeTrajectoryFile(
  path: string,
  trajectory: Trajectory,
): Promise<Result<TrajectoryError, void>> {
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(trajectory, null, 2)}\n`, { mode: 0o600 });
    await rename(temporary, path);
    return ok(undefined);
  } catch (thrown) {
    const code = (thrown as { code?: string }).code ?? 'write error';
    return err({ _tag: 'TrajectoryError', message: `cannot write trajectory file: ${code}` });
  }
}
