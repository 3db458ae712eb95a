/**
 * ReplayProvider plays a recorded trajectory back, turn by turn, in call
 * order — deterministic, offline, instant. With verification on, each
 * request's fingerprint must match the one recorded for that turn; a
 * mismatch (the agent asked something the recording never saw) is a
 * `replay_divergence` error event, never a silently wrong answer.
 *
 * RecordingProvider is the other half: it wraps a real provider, passes its
 * events through untouched, and keeps them in the trajectory format.
 */

import type { Result } from '@crustcore/kernel';
import { errorEvent, type StreamEvent } from '../events.js';
import { guardStream, type ModelProvider } from '../provider.js';
import type { ModelRequest } from '../request.js';
import {
  requestFingerprint,
  type Trajectory,
  type TrajectoryError,
  type TrajectoryTurn,
  writeTrajectoryFile,
} from './trajectory.js';

export interface ReplayOptions {
  /** Check each request against the recorded fingerprint (when the turn has one). Default true. */
  readonly verifyRequests?: boolean;
  readonly id?: string;
}

export class ReplayProvider implements ModelProvider {
  readonly id: string;
  readonly #turns: readonly TrajectoryTurn[];
  readonly #verify: boolean;
  #next = 0;

  constructor(trajectory: Trajectory, options: ReplayOptions = {}) {
    this.#turns = trajectory.turns;
    this.#verify = options.verifyRequests ?? true;
    this.id = options.id ?? 'replay';
  }

  get turnsPlayed(): number {
    return this.#next;
  }

  get turnCount(): number {
    return this.#turns.length;
  }

  /** Starts again from turn 0 (a new session over the same recording). */
  reset(): void {
    this.#next = 0;
  }

  stream(request: ModelRequest, signal?: AbortSignal): AsyncIterable<StreamEvent> {
    // The turn is claimed when the call is made, not when iteration starts: call order is turn order.
    const turn = this.#next;
    this.#next += 1;
    return guardStream(this.id, () => this.#play(turn, request, signal));
  }

  async *#play(turn: number, request: ModelRequest, signal: AbortSignal | undefined): AsyncGenerator<StreamEvent> {
    if (signal?.aborted === true) {
      yield errorEvent({ _tag: 'aborted', provider: this.id, message: 'request aborted by caller' });
      return;
    }
    const recorded = this.#turns[turn];
    if (recorded === undefined) {
      yield errorEvent({
        _tag: 'replay_divergence',
        provider: this.id,
        turn,
        message: `the recording has ${this.#turns.length} turns; turn ${turn} was requested`,
      });
      return;
    }
    if (this.#verify && recorded.requestHash !== undefined) {
      const actualHash = requestFingerprint(request);
      if (actualHash !== recorded.requestHash) {
        yield errorEvent({
          _tag: 'replay_divergence',
          provider: this.id,
          turn,
          expectedHash: recorded.requestHash,
          actualHash,
          message: `turn ${turn}: the request's last user/tool message differs from the recording`,
        });
        return;
      }
    }
    yield* recorded.events;
  }
}

export class RecordingProvider implements ModelProvider {
  readonly id: string;
  readonly #inner: ModelProvider;
  readonly #turns: { requestHash: string; model: string; events: StreamEvent[] }[] = [];

  constructor(inner: ModelProvider, options: { readonly id?: string } = {}) {
    this.#inner = inner;
    this.id = options.id ?? inner.id;
  }

  stream(request: ModelRequest, signal?: AbortSignal): AsyncIterable<StreamEvent> {
    const turn = { requestHash: requestFingerprint(request), model: request.model, events: [] as StreamEvent[] };
    this.#turns.push(turn);
    const inner = this.#inner;
    return guardStream(this.id, async function* () {
      for await (const event of inner.stream(request, signal)) {
        turn.events.push(event);
        yield event;
      }
    });
  }

  /** A snapshot of everything recorded so far. */
  trajectory(): Trajectory {
    return { version: 1, turns: this.#turns.map((turn) => ({ ...turn, events: [...turn.events] })) };
  }

  save(path: string): Promise<Result<TrajectoryError, void>> {
    return writeTrajectoryFile(path, this.trajectory());
  }
}
