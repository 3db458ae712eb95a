import type { Message } from '@crustcore/net';
import { describe, expect, it } from 'vitest';
import { ContextWindow, compactIfNeeded, duplicateText, summaryMessage, tombstoneText } from '../src/index.js';

const user = (content: string): Message => ({ role: 'user', content });
const call = (id: string, name: string, args: Record<string, unknown> = {}): Message => ({
  role: 'assistant',
  content: [{ type: 'tool_call', id, name, arguments: args as never }],
});
const result = (id: string, name: string, content: string): Message => ({
  role: 'tool',
  toolCallId: id,
  toolName: name,
  content,
});

describe('stale-read tombstones', () => {
  it('a write replaces earlier reads of that file, and only those', () => {
    const w = new ContextWindow();
    w.append(user('task'));
    w.append(call('1', 'read_file'));
    w.append(result('1', 'read_file', 'old a.js'), { tool: 'read_file', reads: 'a.js', readOnly: true });
    w.append(call('2', 'read_file'));
    w.append(result('2', 'read_file', 'b.js body'), { tool: 'read_file', reads: 'b.js', readOnly: true });
    w.append(call('3', 'edit_file'));
    w.append(result('3', 'edit_file', 'edited a.js at line 1'), { tool: 'edit_file', writes: 'a.js', mutated: true });
    const messages = w.messages();
    expect((messages[2] as { content: string }).content).toBe(tombstoneText('a.js'));
    expect((messages[4] as { content: string }).content).toBe('b.js body');
    expect((messages[6] as { content: string }).content).toBe('edited a.js at line 1');
    // A read after the write stays.
    w.append(call('4', 'read_file'));
    w.append(result('4', 'read_file', 'new a.js'), { tool: 'read_file', reads: 'a.js', readOnly: true });
    expect((w.messages()[8] as { content: string }).content).toBe('new a.js');
  });
});

describe('micro-compaction', () => {
  it('replaces an earlier identical read-only result in the same world, keeps it across a mutation', () => {
    const w = new ContextWindow();
    w.append(user('task'));
    const meta = { tool: 'grep', callKey: 'grep({"pattern":"x"})', readOnly: true };
    w.append(call('1', 'grep'));
    w.append(result('1', 'grep', 'matches v1'), meta);
    w.append(call('2', 'grep'));
    w.append(result('2', 'grep', 'matches v1'), meta);
    expect(w.microcompact()).toBe(1);
    expect((w.messages()[2] as { content: string }).content).toBe(duplicateText('grep'));
    expect((w.messages()[4] as { content: string }).content).toBe('matches v1');
    w.append(call('3', 'run_command'));
    w.append(result('3', 'run_command', 'exit code 0'), { tool: 'run_command', mutated: true });
    w.append(call('4', 'grep'));
    w.append(result('4', 'grep', 'matches v2'), meta);
    expect(w.microcompact()).toBe(0);
    expect((w.messages()[4] as { content: string }).content).toBe('matches v1');
  });

  it('a later whole-file read supersedes an earlier partial read of the same file', () => {
    const w = new ContextWindow();
    w.append(user('task'));
    w.append(call('1', 'read_file'));
    w.append(result('1', 'read_file', 'lines 1-5'), {
      tool: 'read_file',
      callKey: 'r1',
      reads: 'a.js',
      readOnly: true,
    });
    w.append(call('2', 'read_file'));
    w.append(result('2', 'read_file', 'whole'), {
      tool: 'read_file',
      callKey: 'r2',
      reads: 'a.js',
      readOnly: true,
      wholeFile: true,
    });
    expect(w.microcompact()).toBe(1);
    expect((w.messages()[2] as { content: string }).content).toBe(duplicateText('read_file'));
  });
});

describe('summarization compaction', () => {
  const big = 'x'.repeat(4_000);
  function longWindow(turns: number): ContextWindow {
    const w = new ContextWindow();
    w.append(user('the task'));
    for (let i = 0; i < turns; i += 1) {
      w.append(call(`c${i}`, 'read_file', { path: `f${i}` }), { entryId: `a${i}` });
      w.append(result(`c${i}`, 'read_file', big), { entryId: `r${i}` });
    }
    return w;
  }

  it('under the threshold nothing happens', async () => {
    const w = longWindow(2);
    const outcome = await compactIfNeeded({
      window: w,
      system: '',
      tools: [],
      thresholdTokens: 1_000_000,
      summarize: async () => ({ ok: true, text: 's' }),
    });
    expect(outcome.kind).toBe('skipped');
  });

  it('summarizes the older half, keeps the task prompt, never splits a call from its result', async () => {
    const w = longWindow(10);
    const before = w.estimateTokens('', []);
    let transcript = '';
    const outcome = await compactIfNeeded({
      window: w,
      system: '',
      tools: [],
      thresholdTokens: 1_000,
      summarize: async (text) => {
        transcript = text;
        return { ok: true, text: 'read f0..f4' };
      },
    });
    expect(outcome.kind).toBe('compacted');
    if (outcome.kind !== 'compacted') return;
    expect(outcome.tokensAfter).toBeLessThan(before);
    expect(transcript).toContain('[called read_file {"path":"f0"}]');
    const messages = w.messages();
    expect(messages[0]).toEqual(user('the task'));
    expect(messages[1]).toEqual(summaryMessage('read f0..f4'));
    // Every tool result still follows the assistant call with its id.
    for (let i = 2; i < messages.length; i += 1) {
      const m = messages[i] as Message;
      if (m.role === 'tool') {
        const previous = messages[i - 1] as Message;
        expect(previous.role).toBe('assistant');
        expect(
          previous.role === 'assistant' &&
            previous.content.some((p) => p.type === 'tool_call' && p.id === m.toolCallId),
        ).toBe(true);
      }
    }
    expect(messages[2]?.role).toBe('assistant');
    expect(outcome.firstKeptEntryId).toMatch(/^a\d+$/);
  });

  it('reports no-gain and changes nothing when the summary would not shrink the request', async () => {
    const w = longWindow(6);
    const before = w.messages();
    const outcome = await compactIfNeeded({
      window: w,
      system: '',
      tools: [],
      thresholdTokens: 10,
      summarize: async () => ({ ok: true, text: 'y'.repeat(200_000) }),
    });
    expect(outcome.kind).toBe('no-gain');
    expect(w.messages()).toEqual(before);
  });

  it('a failing summarizer leaves the window unchanged', async () => {
    const w = longWindow(6);
    const before = w.messages();
    const outcome = await compactIfNeeded({
      window: w,
      system: '',
      tools: [],
      thresholdTokens: 10,
      summarize: async () => ({ ok: false, reason: 'model error' }),
    });
    expect(outcome).toEqual({ kind: 'skipped', reason: 'model error' });
    expect(w.messages()).toEqual(before);
  });
});
