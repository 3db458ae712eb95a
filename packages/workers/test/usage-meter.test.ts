import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addUsage,
  boundedModelBudget,
  matchModelId,
  priceTable,
  priceUsage,
  UsageMeter,
  ZERO_USAGE,
} from '../src/index.js';

const encoder = new TextEncoder();
const sseEvent = (data: unknown): string =>
  `event: ${(data as { type: string }).type}\ndata: ${JSON.stringify(data)}\n\n`;

const OPENAI_STREAM = [
  sseEvent({ type: 'response.created', response: { id: 'r1' } }),
  sseEvent({ type: 'response.output_text.delta', delta: 'hello' }),
  sseEvent({
    type: 'response.completed',
    response: {
      id: 'r1',
      usage: { input_tokens: 1200, output_tokens: 80, input_tokens_details: { cached_tokens: 1000 } },
    },
  }),
].join('');

const ANTHROPIC_STREAM = [
  sseEvent({
    type: 'message_start',
    message: {
      id: 'm1',
      usage: { input_tokens: 50, cache_read_input_tokens: 900, cache_creation_input_tokens: 10, output_tokens: 1 },
    },
  }),
  sseEvent({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' } }),
  sseEvent({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 42 } }),
  sseEvent({ type: 'message_stop' }),
].join('');

function meter(wire: 'openai-responses' | 'anthropic-messages', contentType: string, chunks: readonly string[]) {
  const usageMeter = new UsageMeter(wire, contentType);
  for (const chunk of chunks) usageMeter.push(encoder.encode(chunk));
  return { usage: usageMeter.finish(undefined), reported: usageMeter.reported };
}

/** Splits `text` at the given (sorted, deduplicated) offsets. */
function split(text: string, cuts: readonly number[]): string[] {
  const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
  const parts: string[] = [];
  let previous = 0;
  for (const point of points) {
    parts.push(text.slice(previous, point));
    previous = point;
  }
  parts.push(text.slice(previous));
  return parts;
}

describe('UsageMeter', () => {
  it('counts an OpenAI Responses stream from response.completed', () => {
    const { usage, reported } = meter('openai-responses', 'text/event-stream', [OPENAI_STREAM]);
    expect(reported).toBe(true);
    expect(usage).toEqual({ requests: 1, inputTokens: 1200, cachedInputTokens: 1000, outputTokens: 80, costUsd: 0 });
  });

  it('counts an Anthropic Messages stream: start usage plus cache, final output from message_delta', () => {
    const { usage } = meter('anthropic-messages', 'text/event-stream; charset=utf-8', [ANTHROPIC_STREAM]);
    expect(usage).toEqual({ requests: 1, inputTokens: 960, cachedInputTokens: 900, outputTokens: 42, costUsd: 0 });
  });

  it('counts non-streamed JSON bodies of both APIs', () => {
    const openAi = meter('openai-responses', 'application/json', [
      JSON.stringify({ object: 'response', usage: { input_tokens: 7, output_tokens: 3 } }),
    ]);
    expect(openAi.usage).toMatchObject({ inputTokens: 7, outputTokens: 3 });
    const anthropic = meter('anthropic-messages', 'application/json', [
      JSON.stringify({ type: 'message', usage: { input_tokens: 5, output_tokens: 9 } }),
    ]);
    expect(anthropic.usage).toMatchObject({ inputTokens: 5, outputTokens: 9 });
  });

  it('gives the same count however the stream is cut into chunks', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 30 }), (cuts) => {
        expect(meter('openai-responses', 'text/event-stream', split(OPENAI_STREAM, cuts)).usage.outputTokens).toBe(80);
        expect(meter('anthropic-messages', 'text/event-stream', split(ANTHROPIC_STREAM, cuts)).usage.inputTokens).toBe(
          960,
        );
      }),
      { numRuns: 200 },
    );
  });

  it('counts nothing (and never throws) for garbage, wrong shapes and negative counts', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (text) => {
        const { usage } = meter('openai-responses', 'text/event-stream', [text]);
        expect(usage.requests).toBe(1);
      }),
      { numRuns: 200 },
    );
    const forged = sseEvent({
      type: 'response.completed',
      response: { usage: { input_tokens: -5, output_tokens: 1 } },
    });
    expect(meter('openai-responses', 'text/event-stream', [forged]).reported).toBe(false);
    expect(meter('anthropic-messages', 'text/event-stream', [OPENAI_STREAM]).usage.inputTokens).toBe(0);
  });

  it('skips an oversized event instead of buffering it without bound', () => {
    const huge = `data: ${'x'.repeat(1024 * 1024 + 10)}`;
    const { usage } = meter('openai-responses', 'text/event-stream', [huge, 'still the same event\n\n', OPENAI_STREAM]);
    expect(usage.outputTokens).toBe(80);
  });
});

describe('pricing by the model the provider names', () => {
  const prices = priceTable([
    ['gpt-5-codex', { inputUsdPerMillion: 1, outputUsdPerMillion: 10, cachedInputUsdPerMillion: 0.1 }],
    ['claude-sonnet-4-5', { inputUsdPerMillion: 3, outputUsdPerMillion: 15, cachedInputUsdPerMillion: 0.3 }],
    ['claude-sonnet-4', { inputUsdPerMillion: 99, outputUsdPerMillion: 99 }],
  ]);
  const withModel = (stream: string, id: string, model: string): string =>
    stream.replace(`"id":"${id}",`, `"id":"${id}","model":${JSON.stringify(model)},`);

  it('prices an OpenAI stream by response.model, an Anthropic stream by message_start.message.model', () => {
    const openai = new UsageMeter('openai-responses', 'text/event-stream');
    openai.push(encoder.encode(withModel(OPENAI_STREAM, 'r1', 'gpt-5-codex')));
    expect(openai.model).toBe('gpt-5-codex');
    // 200 uncached × $1 + 1000 cached × $0.1 + 80 output × $10, per million tokens.
    expect(openai.finish(prices).costUsd).toBeCloseTo((200 * 1 + 1000 * 0.1 + 80 * 10) / 1e6, 12);

    const anthropic = new UsageMeter('anthropic-messages', 'text/event-stream');
    anthropic.push(encoder.encode(withModel(ANTHROPIC_STREAM, 'm1', 'claude-sonnet-4-5-20250929')));
    // A dated snapshot takes the longest id it extends (not claude-sonnet-4).
    expect(anthropic.model).toBe('claude-sonnet-4-5-20250929');
    expect(anthropic.finish(prices).costUsd).toBeCloseTo((60 * 3 + 900 * 0.3 + 42 * 15) / 1e6, 12);
  });

  it('matches ids exactly, or as a dated snapshot of an id, and nothing else', () => {
    expect(prices('gpt-5-codex-2025-09-15')).toBe(prices('gpt-5-codex'));
    expect(prices('claude-sonnet-4-20250514')).toEqual({ inputUsdPerMillion: 99, outputUsdPerMillion: 99 });
    for (const name of [
      'gpt-5-codex-pro',
      'gpt-5-codex-2025-09',
      'gpt-5-codex-20250915x',
      'claude-sonnet-4-5-latest',
      'GPT-5-CODEX',
    ]) {
      expect(prices(name), name).toBeUndefined();
    }
    expect(prices.highest).toEqual({ inputUsdPerMillion: 99, outputUsdPerMillion: 99, cachedInputUsdPerMillion: 99 });
    expect(matchModelId('gpt-5-2025-08-07', new Set(['gpt-5']))).toBe('gpt-5');
    expect(matchModelId('gpt-5-pro', new Set(['gpt-5']))).toBeNull();
  });

  it('an unknown or unnamed model has no price (tokens are still counted)', () => {
    expect(prices('gpt-4o')).toBeUndefined();
    expect(prices(null)).toBeUndefined();
    expect(prices('claude-sonnetx')).toBeUndefined();
    const { usage } = meter('openai-responses', 'text/event-stream', [OPENAI_STREAM]);
    expect(usage.inputTokens).toBe(1200);
  });
});

describe('pricing and budgets', () => {
  it('prices uncached, cached and output tokens separately', () => {
    const cost = priceUsage(
      { inputTokens: 1_000_000, cachedInputTokens: 500_000, outputTokens: 100_000 },
      { inputUsdPerMillion: 2, cachedInputUsdPerMillion: 0.5, outputUsdPerMillion: 8 },
    );
    expect(cost).toBeCloseTo(1 + 0.25 + 0.8, 10);
    expect(priceUsage({ inputTokens: 5, cachedInputTokens: 0, outputTokens: 5 }, undefined)).toBe(0);
  });

  it('boundedModelBudget refuses once a limit is reached', () => {
    const budget = boundedModelBudget({ maxTokens: 150, maxRequests: 5 });
    expect(budget.mayRequest()).toBe(true);
    budget.charge({ ...ZERO_USAGE, requests: 1, inputTokens: 100, outputTokens: 20 });
    expect(budget.mayRequest()).toBe(true);
    budget.charge({ ...ZERO_USAGE, requests: 1, inputTokens: 20, outputTokens: 20 });
    expect(budget.mayRequest()).toBe(false);
    expect(budget.spent()).toEqual(
      addUsage(
        { ...ZERO_USAGE, requests: 1, inputTokens: 100, outputTokens: 20 },
        { ...ZERO_USAGE, requests: 1, inputTokens: 20, outputTokens: 20 },
      ),
    );
    const byCost = boundedModelBudget({ maxCostUsd: 0.01 });
    byCost.charge({ ...ZERO_USAGE, requests: 1, costUsd: 0.02 });
    expect(byCost.mayRequest()).toBe(false);
    expect(byCost.remaining()).toEqual({ costUsd: 0 });
  });

  it('a meter cut mid-stream reports no final usage but the output bytes it saw', () => {
    const cut = OPENAI_STREAM.slice(0, OPENAI_STREAM.indexOf('event: response.completed'));
    const seen = new UsageMeter('openai-responses', 'text/event-stream');
    seen.push(encoder.encode(cut));
    expect(seen.observe()).toMatchObject({ final: false, outputTokens: 0, outputBytes: 5 });
    const whole = new UsageMeter('anthropic-messages', 'text/event-stream');
    whole.push(encoder.encode(ANTHROPIC_STREAM));
    expect(whole.observe()).toMatchObject({ final: true, outputTokens: 42 });
  });
});
