import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  createAnthropicProvider,
  decodeTrajectory,
  type Message,
  RecordingProvider,
  ReplayProvider,
  readTrajectoryFile,
  requestFingerprint,
  type Trajectory,
} from '../src/index.js';
import { API_KEY, drain, request } from './harnesses.js';
import { type ScriptedServer, sequence, sse, startServer } from './scripted-server.js';
import { anthropicFrames } from './wire-scripts.js';

let directory = '';
let server: ScriptedServer | undefined;
beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'crustcore-net-replay-'));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  await rm(directory, { recursive: true, force: true });
});

const TURN_ONE: Message[] = [{ role: 'user', content: 'Fix the bug.' }];

describe('record then replay', () => {
  it('records a real provider to a file and replays it deterministically, turn by turn', async () => {
    server = await startServer(
      sequence(
        sse(
          anthropicFrames({
            text: ['Looking.'],
            calls: [{ id: 'toolu_1', name: 'read_file', argumentsText: '{"path":"a.ts"}' }],
          }),
        ),
        sse(anthropicFrames({ text: ['Fixed.'], calls: [] })),
      ),
    );
    const real = createAnthropicProvider({
      id: 'anthropic',
      baseUrl: `${server.origin}/v1`,
      key: { expose: () => API_KEY },
    });
    const recorder = new RecordingProvider(real);
    const turnTwo: Message[] = [
      ...TURN_ONE,
      {
        role: 'assistant',
        content: [{ type: 'tool_call', id: 'toolu_1', name: 'read_file', arguments: { path: 'a.ts' } }],
      },
      { role: 'tool', toolCallId: 'toolu_1', toolName: 'read_file', content: 'bug here' },
    ];
    const live = [
      await drain(recorder.stream(request({ messages: TURN_ONE }))),
      await drain(recorder.stream(request({ messages: turnTwo }))),
    ];
    const path = join(directory, 'trajectory.json');
    expect(await recorder.save(path)).toEqual({ _tag: 'Right', right: undefined });
    expect(await readFile(path, 'utf8')).not.toContain(API_KEY);

    const loaded = await readTrajectoryFile(path);
    if (loaded._tag === 'Left') throw new Error(loaded.left.message);
    expect(loaded.right.turns.map((turn) => turn.requestHash)).toEqual([
      requestFingerprint(request({ messages: TURN_ONE })),
      requestFingerprint(request({ messages: turnTwo })),
    ]);
    for (let run = 0; run < 2; run += 1) {
      const replay = new ReplayProvider(loaded.right);
      const replayed = [
        await drain(replay.stream(request({ messages: TURN_ONE }))),
        await drain(replay.stream(request({ messages: turnTwo }))),
      ];
      expect(replayed).toEqual(live);
      expect(replay.turnsPlayed).toBe(2);
    }
  });

  it('reports a request that differs from the recording as replay_divergence', async () => {
    const trajectory: Trajectory = {
      version: 1,
      turns: [
        {
          requestHash: requestFingerprint(request({ messages: TURN_ONE })),
          events: [{ type: 'done', stopReason: 'end_turn' }],
        },
      ],
    };
    const replay = new ReplayProvider(trajectory);
    const events = await drain(replay.stream(request({ messages: [{ role: 'user', content: 'Something else.' }] })));
    expect(events).toEqual([
      {
        type: 'error',
        error: {
          _tag: 'replay_divergence',
          provider: 'replay',
          turn: 0,
          expectedHash: trajectory.turns[0]!.requestHash,
          actualHash: requestFingerprint(request({ messages: [{ role: 'user', content: 'Something else.' }] })),
          message: "turn 0: the request's last user/tool message differs from the recording",
        },
      },
    ]);
    // Without verification the same request plays.
    const lenient = new ReplayProvider(trajectory, { verifyRequests: false });
    expect(await drain(lenient.stream(request()))).toEqual([{ type: 'done', stopReason: 'end_turn' }]);
  });

  it('reports running past the end of the recording, and a recorded turn without a terminal, as errors', async () => {
    const replay = new ReplayProvider({ version: 1, turns: [{ events: [{ type: 'text_delta', text: 'cut' }] }] });
    expect(await drain(replay.stream(request()))).toEqual([
      { type: 'text_delta', text: 'cut' },
      {
        type: 'error',
        error: { _tag: 'truncated', provider: 'replay', message: 'provider stream ended without a terminal event' },
      },
    ]);
    const past = await drain(replay.stream(request()));
    expect(past[0]).toMatchObject({ type: 'error', error: { _tag: 'replay_divergence', turn: 1 } });
    replay.reset();
    expect((await drain(replay.stream(request())))[0]).toEqual({ type: 'text_delta', text: 'cut' });
  });

  it('rejects malformed trajectory files with a typed error', async () => {
    expect(decodeTrajectory({ version: 2, turns: [] })._tag).toBe('Left');
    expect(decodeTrajectory({ version: 1, turns: [{ events: [{ type: 'launch' }] }] })._tag).toBe('Left');
    expect(decodeTrajectory({ version: 1, turns: [{ events: [{ type: 'usage', inputTokens: -1 }] }] })._tag).toBe(
      'Left',
    );
    expect(
      decodeTrajectory({
        version: 1,
        turns: [{ events: [{ type: 'tool_call', id: 'c', name: 'x', arguments: [1, 2] }] }],
      })._tag,
    ).toBe('Left');
    const path = join(directory, 'bad.json');
    await writeFile(path, '{"version": 1, "turns": [');
    const read = await readTrajectoryFile(path);
    expect(read).toMatchObject({ _tag: 'Left', left: { _tag: 'TrajectoryError' } });
    expect(await readTrajectoryFile(join(directory, 'missing.json'))).toMatchObject({
      _tag: 'Left',
      left: { message: 'cannot read trajectory file: ENOENT' },
    });
  });

  it('decodes every event type, including typed errors and retries', () => {
    const trajectory = {
      version: 1,
      turns: [
        {
          events: [
            { type: 'thinking_delta', text: 't' },
            { type: 'thinking_signature', signature: 's' },
            { type: 'tool_call', id: 'c', name: 'n', arguments: { a: [1, { b: null }] }, signature: 'g' },
            { type: 'tool_call_error', id: 'c2', name: 'n', raw: '{', message: 'bad' },
            {
              type: 'retry',
              attempt: 1,
              delayMs: 7000,
              from: { provider: 'a', model: 'm' },
              to: { provider: 'a', model: 'm' },
              cause: { _tag: 'rate_limited', provider: 'a', message: '429', retryAfterMs: 7000 },
            },
            {
              type: 'usage',
              inputTokens: 1,
              outputTokens: 2,
              cacheReadTokens: 3,
              cacheWriteTokens: 4,
              costMicroDollars: 5,
              priced: true,
            },
            { type: 'error', error: { _tag: 'stalled', provider: 'a', message: 'idle', idleMs: 100 } },
          ],
        },
      ],
    };
    expect(decodeTrajectory(trajectory)).toEqual({ _tag: 'Right', right: trajectory });
  });
});
