/**
 * Real wire frames for each protocol, built from one neutral scenario, so the
 * same behaviour matrix runs against every dialect. Shapes follow the
 * vendors' published streaming formats (and the vendor SDKs' type
 * definitions in node_modules).
 */
import type { Frame } from './scripted-server.js';

export interface ScriptedCall {
  readonly id: string;
  readonly name: string;
  /** The exact JSON text the model "emits" (may be malformed on purpose). */
  readonly argumentsText: string;
}

export interface Scenario {
  readonly thinking?: string;
  readonly text: readonly string[];
  readonly calls: readonly ScriptedCall[];
}

/** Token usage every script reports: 200 fresh input, 1000 cache-read input, 50 output. */
export const USAGE = { input: 200, cacheRead: 1000, output: 50 } as const;

const split = (text: string, pieces: number): string[] => {
  const size = Math.max(1, Math.ceil(text.length / pieces));
  const out: string[] = [];
  for (let index = 0; index < text.length; index += size) out.push(text.slice(index, index + size));
  return out.length === 0 ? [''] : out;
};

// ─── OpenAI Chat Completions ──────────────────────────────────────────────

export interface ChatFlavor {
  /** Ollama sends each call whole in one chunk and says finish_reason "stop". */
  readonly ollama?: boolean;
  /** OpenRouter reports its own cost (USD) in usage. */
  readonly reportedCost?: number;
}

export function chatFrames(scenario: Scenario, flavor: ChatFlavor = {}): Frame[] {
  const chunk = (choice: object, extra: object = {}): Frame => ({
    data: {
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'm',
      choices: [{ index: 0, ...choice }],
      ...extra,
    },
  });
  const frames: Frame[] = [chunk({ delta: { role: 'assistant', content: '' }, finish_reason: null })];
  if (scenario.thinking !== undefined) {
    const field = flavor.ollama === true ? 'reasoning' : 'reasoning_content';
    frames.push(chunk({ delta: { [field]: scenario.thinking }, finish_reason: null }));
  }
  for (const text of scenario.text) frames.push(chunk({ delta: { content: text }, finish_reason: null }));
  scenario.calls.forEach((call, index) => {
    if (flavor.ollama === true) {
      frames.push(
        chunk({
          delta: {
            tool_calls: [
              { index, id: call.id, type: 'function', function: { name: call.name, arguments: call.argumentsText } },
            ],
          },
          finish_reason: null,
        }),
      );
      return;
    }
    frames.push(
      chunk({
        delta: { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] },
        finish_reason: null,
      }),
    );
    for (const piece of split(call.argumentsText, 3)) {
      frames.push(chunk({ delta: { tool_calls: [{ index, function: { arguments: piece } }] }, finish_reason: null }));
    }
  });
  const finish = scenario.calls.length > 0 && flavor.ollama !== true ? 'tool_calls' : 'stop';
  frames.push(chunk({ delta: {}, finish_reason: finish }));
  frames.push({
    data: {
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      choices: [],
      usage: {
        prompt_tokens: USAGE.input + USAGE.cacheRead,
        completion_tokens: USAGE.output,
        total_tokens: USAGE.input + USAGE.cacheRead + USAGE.output,
        prompt_tokens_details: { cached_tokens: USAGE.cacheRead },
        ...(flavor.reportedCost === undefined ? {} : { cost: flavor.reportedCost }),
      },
    },
  });
  frames.push({ data: '[DONE]' });
  return frames;
}
/** Frames to drop for a truncated chat stream: the finish chunk, usage and [DONE]. */
export const CHAT_TERMINAL_FRAMES = 3;

// ─── OpenAI Responses ─────────────────────────────────────────────────────

export function responsesFrames(scenario: Scenario): Frame[] {
  const frame = (type: string, body: object): Frame => ({ event: type, data: { type, ...body } });
  let sequence = 0;
  const next = (type: string, body: object): Frame => frame(type, { sequence_number: sequence++, ...body });
  const frames: Frame[] = [
    next('response.created', { response: { id: 'resp_1', object: 'response', status: 'in_progress' } }),
  ];
  let outputIndex = 0;
  if (scenario.thinking !== undefined) {
    frames.push(
      next('response.output_item.added', {
        output_index: outputIndex,
        item: { type: 'reasoning', id: 'rs_1', summary: [] },
      }),
    );
    frames.push(
      next('response.reasoning_summary_text.delta', {
        item_id: 'rs_1',
        output_index: outputIndex,
        summary_index: 0,
        delta: scenario.thinking,
      }),
    );
    frames.push(
      next('response.output_item.done', {
        output_index: outputIndex,
        item: { type: 'reasoning', id: 'rs_1', summary: [] },
      }),
    );
    outputIndex += 1;
  }
  frames.push(
    next('response.output_item.added', {
      output_index: outputIndex,
      item: { type: 'message', id: 'msg_1', role: 'assistant', status: 'in_progress', content: [] },
    }),
  );
  for (const text of scenario.text) {
    frames.push(
      next('response.output_text.delta', {
        item_id: 'msg_1',
        output_index: outputIndex,
        content_index: 0,
        delta: text,
        logprobs: [],
      }),
    );
  }
  frames.push(
    next('response.output_item.done', {
      output_index: outputIndex,
      item: { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [] },
    }),
  );
  outputIndex += 1;
  for (const call of scenario.calls) {
    const item = { type: 'function_call', id: `fc_${call.id}`, call_id: call.id, name: call.name };
    frames.push(
      next('response.output_item.added', {
        output_index: outputIndex,
        item: { ...item, arguments: '', status: 'in_progress' },
      }),
    );
    for (const piece of split(call.argumentsText, 3)) {
      frames.push(
        next('response.function_call_arguments.delta', { item_id: item.id, output_index: outputIndex, delta: piece }),
      );
    }
    frames.push(
      next('response.function_call_arguments.done', {
        item_id: item.id,
        output_index: outputIndex,
        arguments: call.argumentsText,
      }),
    );
    frames.push(
      next('response.output_item.done', {
        output_index: outputIndex,
        item: { ...item, arguments: call.argumentsText, status: 'completed' },
      }),
    );
    outputIndex += 1;
  }
  frames.push(
    next('response.completed', {
      response: {
        id: 'resp_1',
        object: 'response',
        status: 'completed',
        usage: {
          input_tokens: USAGE.input + USAGE.cacheRead,
          input_tokens_details: { cached_tokens: USAGE.cacheRead },
          output_tokens: USAGE.output,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: USAGE.input + USAGE.cacheRead + USAGE.output,
        },
      },
    }),
  );
  return frames;
}
export const RESPONSES_TERMINAL_FRAMES = 1;

// ─── Anthropic Messages ───────────────────────────────────────────────────

export function anthropicFrames(scenario: Scenario): Frame[] {
  const frame = (type: string, body: object): Frame => ({ event: type, data: { type, ...body } });
  const frames: Frame[] = [
    frame('message_start', {
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        content: [],
        model: 'claude-test',
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: USAGE.input,
          cache_read_input_tokens: USAGE.cacheRead,
          cache_creation_input_tokens: 0,
          output_tokens: 1,
        },
      },
    }),
  ];
  let index = 0;
  if (scenario.thinking !== undefined) {
    frames.push(
      frame('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }),
    );
    frames.push(
      frame('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: scenario.thinking } }),
    );
    frames.push(
      frame('content_block_delta', { index, delta: { type: 'signature_delta', signature: 'sig-anthropic-1' } }),
    );
    frames.push(frame('content_block_stop', { index }));
    index += 1;
  }
  frames.push(frame('content_block_start', { index, content_block: { type: 'text', text: '' } }));
  frames.push(frame('ping', {}));
  for (const text of scenario.text)
    frames.push(frame('content_block_delta', { index, delta: { type: 'text_delta', text } }));
  frames.push(frame('content_block_stop', { index }));
  index += 1;
  for (const call of scenario.calls) {
    frames.push(
      frame('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
      }),
    );
    for (const piece of split(call.argumentsText, 3)) {
      frames.push(frame('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } }));
    }
    frames.push(frame('content_block_stop', { index }));
    index += 1;
  }
  frames.push(
    frame('message_delta', {
      delta: { stop_reason: scenario.calls.length > 0 ? 'tool_use' : 'end_turn', stop_sequence: null },
      usage: { output_tokens: USAGE.output },
    }),
  );
  frames.push(frame('message_stop', {}));
  return frames;
}
export const ANTHROPIC_TERMINAL_FRAMES = 1;

// ─── Gemini ───────────────────────────────────────────────────────────────

/** Gemini sends args as an object; a deliberately malformed call is sent as its raw string instead. */
export function geminiFrames(scenario: Scenario): Frame[] {
  const chunk = (parts: object[], extra: object = {}): Frame => ({
    data: {
      candidates: [{ content: { role: 'model', parts }, index: 0, ...extra }],
      responseId: 'resp-g1',
      modelVersion: 'gemini-test',
    },
  });
  const frames: Frame[] = [];
  if (scenario.thinking !== undefined) frames.push(chunk([{ text: scenario.thinking, thought: true }]));
  for (const text of scenario.text) frames.push(chunk([{ text }]));
  const calls = scenario.calls.map((call, index) => {
    let args: unknown;
    try {
      args = JSON.parse(call.argumentsText);
    } catch {
      args = call.argumentsText;
    }
    return { functionCall: { name: call.name, args }, ...(index === 0 ? { thoughtSignature: 'sig-gemini-1' } : {}) };
  });
  frames.push({
    data: {
      candidates: [{ content: { role: 'model', parts: calls }, finishReason: 'STOP', index: 0 }],
      usageMetadata: {
        promptTokenCount: USAGE.input + USAGE.cacheRead,
        cachedContentTokenCount: USAGE.cacheRead,
        candidatesTokenCount: USAGE.output - 10,
        thoughtsTokenCount: 10,
        totalTokenCount: USAGE.input + USAGE.cacheRead + USAGE.output,
      },
      responseId: 'resp-g1',
    },
  });
  return frames;
}
export const GEMINI_TERMINAL_FRAMES = 1;
