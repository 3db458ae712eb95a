/**
 * The headless writer on its own: usage totals (summed, unknown when nothing
 * was reported, cost unknown when a turn was unpriced), the native agent's
 * deltas folded into whole `assistant` messages, and every line it writes
 * decoding exactly with the schema module. golden/headless.test.ts runs the
 * same code through a real `crustcore run`.
 */
import { PassThrough } from 'node:stream';
import type { Action, KernelEvent } from '@crustcore/kernel';
import type { Narrator } from '@crustcore/runtime';
import { describe, expect, it } from 'vitest';
import { runOutput } from '../src/render/headless.js';
import { HeadlessLine } from '../src/render/headless-schema.js';

const modelTurn = (inputTokens: number, outputTokens: number, costMicros: number): KernelEvent =>
  ({ kind: 'ModelOutputReceived', taskId: 't_x', inputTokens, outputTokens, costMicros }) as unknown as KernelEvent;

const usageEvent = (priced: boolean) => ({
  type: 'usage',
  inputTokens: 1,
  outputTokens: 1,
  costMicros: 0,
  priced,
  totalTokens: 2,
  totalCostMicros: 0,
  contextTokens: 0,
});

function capture(): { out: PassThrough; lines: () => Record<string, unknown>[] } {
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  return {
    out,
    lines: () =>
      text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

const seen: KernelEvent[] = [];
const base: Narrator = { event: (event) => seen.push(event), note() {} };
const outcome = { kind: 'completed', reason: 'applied', attempts: 1, patchHash: 'p', journalId: 'j' };

describe('headless output', () => {
  it('sums the reported model turns for --json and text, and passes every event on', () => {
    const output = runOutput('json', new PassThrough(), 't_1', base, '0.0.0');
    output.narrator.event(modelTurn(1_500, 40, 2_000), []);
    output.narrator.event(modelTurn(500, 60, 1_300), []);
    expect(seen).toHaveLength(2);
    expect(output.jsonFields()).toMatchObject({
      usage: { inputTokens: 2_000, outputTokens: 100, modelTurns: 2 },
      costUsd: 0.0033,
      schemaVersion: 1,
    });
    expect(output.textLine()).toBe('tokens 2.0k in / 100 out · $0.0033 · 2 model turn(s)');
  });

  it('says unknown, not zero: no model turn reported, or a turn without a price', () => {
    const none = runOutput('text', new PassThrough(), 't_2', base, '0.0.0');
    expect(none.jsonFields()).toMatchObject({ usage: null, costUsd: null });
    expect(none.textLine()).toMatch(/^tokens: unknown .* cost: unknown$/);
    const unpriced = runOutput('text', new PassThrough(), 't_3', base, '0.0.0');
    unpriced.onAgentEvent(usageEvent(false));
    unpriced.narrator.event(modelTurn(10, 5, 0), []);
    expect(unpriced.jsonFields()).toMatchObject({ usage: { inputTokens: 10 }, costUsd: null });
    expect(unpriced.textLine()).toContain('cost: unknown');
    // Control: the same turn priced (a real charge of 0 is then a price).
    const priced = runOutput('text', new PassThrough(), 't_4', base, '0.0.0');
    priced.onAgentEvent(usageEvent(true));
    priced.narrator.event(modelTurn(10, 5, 0), []);
    expect(priced.jsonFields()).toMatchObject({ costUsd: 0 });
  });

  it('stream-json: init first, deltas as whole assistant messages, tool results, result last; all decode', async () => {
    const { out, lines } = capture();
    const output = runOutput('stream-json', out, 't_5', base, '0.0.0');
    await output.init('/repo', 'p/m', 'auto', 'external', ['npm', 'test']);
    const agent = [
      { type: 'turn_start', turn: 1, actor: 'agent' },
      { type: 'text_delta', text: 'Read', actor: 'agent' },
      { type: 'text_delta', text: 'ing.', actor: 'agent' },
      { type: 'tool_call', id: 'c1', tool: 'read_file', summary: 'read src/a.js', actor: 'agent' },
      { type: 'tool_result', id: 'c1', tool: 'read_file', status: 'denied', summary: 'outside', actor: 'agent' },
      { type: 'text_delta', text: 'Done.', actor: 'agent' },
      { type: 'attempt_end', outcome: 'done', selfClaimedDone: true, turns: 1, reason: 'ok' },
    ];
    for (const event of agent) output.onAgentEvent(event);
    output.narrator.event(modelTurn(100, 10, 50), [] as Action[]);
    output.result(outcome, 0, '/state');
    const written = lines();
    for (const line of written) {
      const decoded = HeadlessLine.decode(line);
      expect(decoded._tag, JSON.stringify(line)).toBe('Right');
      if (decoded._tag === 'Right') expect(decoded.right).toEqual(line);
    }
    expect(written[0]).toMatchObject({ type: 'system', subtype: 'init', session_id: 't_5', model: 'p/m' });
    const messages = written.filter((line) => line.type === 'assistant' || line.type === 'user');
    expect(messages.map((line) => (line.message as { content: { type: string }[] }).content[0]?.type)).toEqual([
      'text',
      'tool_use',
      'tool_result',
      'text',
    ]);
    expect(JSON.stringify(messages[0])).toContain('"text":"Reading."');
    expect(JSON.stringify(messages[2])).toContain('"is_error":true');
    expect(written.at(-1)).toMatchObject({
      type: 'result',
      subtype: 'success',
      is_error: false,
      num_turns: 1,
      total_cost_usd: 0.00005,
      usage: { input_tokens: 100, output_tokens: 10 },
      session_id: 't_5',
    });
  });

  it('a task that could not run still ends the stream with an error result', () => {
    const { out, lines } = capture();
    const output = runOutput('stream-json', out, 't_6', base, '0.0.0');
    output.fail('busy', 75, 'the log is in use');
    expect(lines().at(-1)).toMatchObject({
      type: 'result',
      subtype: 'error_during_execution',
      is_error: true,
      outcome: 'busy',
      exit_code: 75,
      usage: { input_tokens: null, output_tokens: null },
    });
  });
});
