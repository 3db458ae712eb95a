import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readClaudeEvents, readCodexEvents } from '../src/index.js';

const lines = (...values: unknown[]): string => values.map((value) => JSON.stringify(value)).join('\n');

describe('readCodexEvents (codex exec --json)', () => {
  const stream = lines(
    { type: 'thread.started', thread_id: 't' },
    { type: 'item.completed', item: { id: 'i0', type: 'error', message: 'Model metadata for `x` not found.' } },
    { type: 'turn.started' },
    { type: 'item.started', item: { id: 'i1', type: 'command_execution', command: 'ls', exit_code: null } },
    {
      type: 'item.completed',
      item: { id: 'i1', type: 'command_execution', command: "/bin/bash -c 'ls'", aggregated_output: 'a', exit_code: 0 },
    },
    { type: 'item.completed', item: { id: 'i2', type: 'command_execution', command: 'false', exit_code: 1 } },
    { type: 'item.completed', item: { id: 'i3', type: 'agent_message', text: 'first' } },
    { type: 'item.completed', item: { id: 'i4', type: 'agent_message', text: 'Done.\n{"done":true}' } },
    { type: 'turn.completed', usage: { input_tokens: 1, output_tokens: 1 } },
  );

  it('reads the last message, the commands with exit codes, and a completed turn', () => {
    const activity = readCodexEvents(`${stream}\nnot json\n{broken`);
    expect(activity.lastMessage).toBe('Done.\n{"done":true}');
    expect(activity.commands).toEqual([
      { command: "/bin/bash -c 'ls'", exitCode: 0 },
      { command: 'false', exitCode: 1 },
    ]);
    expect(activity.finishedCleanly).toBe(true);
    expect(activity.errors).toEqual(['Model metadata for `x` not found.']);
    expect(activity.eventCount).toBe(9);
  });

  it('a failed turn is not a clean finish', () => {
    const failed = readCodexEvents(
      lines({ type: 'turn.started' }, { type: 'turn.failed', error: { message: 'stream disconnected' } }),
    );
    expect(failed.finishedCleanly).toBe(false);
    expect(failed.lastMessage).toBeNull();
    expect(failed.errors).toEqual(['stream disconnected']);
  });
});

describe('readClaudeEvents (claude -p --output-format stream-json)', () => {
  const stream = lines(
    { type: 'system', subtype: 'init', cwd: '/w' },
    {
      type: 'assistant',
      message: { content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'npm test' } }] },
    },
    { type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] } },
    {
      type: 'assistant',
      message: { content: [{ type: 'tool_use', id: 't2', name: 'Write', input: { file_path: '/w/a', content: 'x' } }] },
    },
    { type: 'assistant', message: { content: [{ type: 'text', text: 'Fixed it.' }] } },
    { type: 'result', subtype: 'success', is_error: false, result: 'Fixed it. {"done":true}' },
  );

  it('reads Bash commands, and the result text as the last message', () => {
    const activity = readClaudeEvents(stream);
    expect(activity.commands).toEqual([{ command: 'npm test', exitCode: null }]);
    expect(activity.lastMessage).toBe('Fixed it. {"done":true}');
    expect(activity.finishedCleanly).toBe(true);
    expect(activity.errors).toEqual([]);
  });

  it('an error result is not a clean finish', () => {
    const activity = readClaudeEvents(
      lines({ type: 'result', subtype: 'error_max_turns', is_error: true, result: 'ran out of turns' }),
    );
    expect(activity.finishedCleanly).toBe(false);
    expect(activity.errors[0]).toContain('error_max_turns');
  });
});

describe('event readers on arbitrary input', () => {
  it('never throw on noise, half events or any JSON', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), fc.json()), { maxLength: 20 }), (parts) => {
        const text = parts.join('\n');
        const codex = readCodexEvents(text);
        const claude = readClaudeEvents(text);
        expect(codex.commands.length).toBeLessThanOrEqual(parts.length);
        expect(typeof claude.finishedCleanly).toBe('boolean');
      }),
      { numRuns: 300 },
    );
  });
});
