/**
 * A scripted model provider on 127.0.0.1 for driving the REAL worker CLIs.
 * It speaks what each CLI sends: the OpenAI Responses API with SSE for
 * Codex (`POST /v1/responses`), the Anthropic Messages API with SSE for
 * Claude Code (`POST /v1/messages`). Which step of the script to play is
 * decided by how many tool results the request already carries, so the
 * server is stateless across the CLI's retries. Every request is kept (with
 * its headers) so tests can check the key the proxy injected.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ModelWire } from '../src/index.js';

/** One turn of the scripted model. */
export type ScriptStep =
  /** Ask the worker to run a shell command. */
  | { readonly kind: 'shell'; readonly command: string }
  /** End the turn with this text. */
  | { readonly kind: 'message'; readonly text: string }
  /** Call a tool by the name the CLI gives it (an MCP tool: `mcp__SERVER__TOOL` in both CLIs). */
  | { readonly kind: 'tool'; readonly name: string; readonly arguments: Readonly<Record<string, unknown>> };

export interface CapturedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** Outputs of earlier tool calls the CLI sent back (text). */
  readonly toolOutputs: readonly string[];
}

export interface ScriptedModel {
  /** `http://127.0.0.1:PORT` */
  readonly origin: string;
  readonly requests: CapturedRequest[];
  /** TCP connections accepted (a server nobody may reach must stay at 0). */
  readonly connections: () => number;
  readonly close: () => Promise<void>;
}

/** Usage every scripted response reports (so tests can check the proxy's count). */
export const SCRIPTED_USAGE = { inputTokens: 100, outputTokens: 20 } as const;

const MAX_BODY_BYTES = 64 * 1024 * 1024;

function sse(response: ServerResponse, events: readonly { readonly type: string }[]): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const event of events) response.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  response.end();
}

function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(textOf).join('\n');
  if (typeof value === 'object' && value !== null && 'text' in value) return textOf((value as { text: unknown }).text);
  return '';
}

// ─── OpenAI Responses (Codex) ──────────────────────────────────────────────

function openAiOutputs(body: { input?: unknown }): string[] {
  const input = Array.isArray(body.input) ? body.input : [];
  return input
    .filter((item): item is { type: string; output: unknown } =>
      ['function_call_output', 'custom_tool_call_output'].includes(String((item as { type?: unknown })?.type)),
    )
    .map((item) => textOf(item.output));
}

function openAiTurn(step: ScriptStep, index: number): { type: string }[] {
  const usage = {
    input_tokens: SCRIPTED_USAGE.inputTokens,
    output_tokens: SCRIPTED_USAGE.outputTokens,
    total_tokens: SCRIPTED_USAGE.inputTokens + SCRIPTED_USAGE.outputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens_details: { reasoning_tokens: 0 },
  };
  const id = `resp_${index}`;
  const item =
    step.kind === 'tool'
      ? {
          // Codex defers MCP tools to its code mode: a script for its `exec` tool calls them on `tools`.
          type: 'custom_tool_call',
          id: `ctc_${index}`,
          call_id: `call_${index}`,
          name: 'exec',
          input: `text(JSON.stringify(await tools.${step.name}(${JSON.stringify(step.arguments)})));`,
        }
      : step.kind === 'shell'
        ? {
            type: 'function_call',
            id: `fc_${index}`,
            call_id: `call_${index}`,
            name: 'exec_command',
            // Plain pipes, no login shell, and long enough to let the command finish in one call.
            arguments: JSON.stringify({ cmd: step.command, tty: false, login: false, yield_time_ms: 30_000 }),
          }
        : {
            type: 'message',
            id: `msg_${index}`,
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: step.text, annotations: [] }],
          };
  return [
    { type: 'response.created', response: { id, status: 'in_progress' } } as { type: string },
    { type: 'response.output_item.added', output_index: 0, item } as { type: string },
    { type: 'response.output_item.done', output_index: 0, item } as { type: string },
    { type: 'response.completed', response: { id, model: 'scripted', status: 'completed', usage } } as {
      type: string;
    },
  ];
}

// ─── Anthropic Messages (Claude Code) ──────────────────────────────────────

function anthropicOutputs(body: { messages?: unknown }): string[] {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const outputs: string[] = [];
  for (const message of messages) {
    const content = (message as { content?: unknown }).content;
    if (!Array.isArray(content)) continue;
    for (const block of content) {
      if ((block as { type?: unknown }).type === 'tool_result')
        outputs.push(textOf((block as { content?: unknown }).content));
    }
  }
  return outputs;
}

function anthropicTurn(step: ScriptStep, index: number): { type: string }[] {
  const events: { type: string }[] = [
    {
      type: 'message_start',
      message: {
        id: `msg_${index}`,
        type: 'message',
        role: 'assistant',
        content: [],
        model: 'scripted',
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: SCRIPTED_USAGE.inputTokens, output_tokens: 1 },
      },
    } as { type: string },
  ];
  if (step.kind === 'tool') {
    events.push(
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: `toolu_${index}`, name: step.name, input: {} },
      } as { type: string },
      {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(step.arguments) },
      } as { type: string },
    );
  } else if (step.kind === 'shell') {
    events.push(
      {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: `toolu_${index}`, name: 'Bash', input: {} },
      } as { type: string },
      {
        type: 'content_block_delta',
        index: 0,
        delta: {
          type: 'input_json_delta',
          partial_json: JSON.stringify({ command: step.command, description: 'Run a scripted step' }),
        },
      } as { type: string },
    );
  } else {
    events.push(
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } as { type: string },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: step.text } } as { type: string },
    );
  }
  events.push(
    { type: 'content_block_stop', index: 0 } as { type: string },
    {
      type: 'message_delta',
      delta: { stop_reason: step.kind === 'message' ? 'end_turn' : 'tool_use', stop_sequence: null },
      usage: { output_tokens: SCRIPTED_USAGE.outputTokens },
    } as { type: string },
    { type: 'message_stop' },
  );
  return events;
}

/** Starts the scripted provider for `wire`, playing `steps` in order, then a closing message. */
export async function startScriptedModel(wire: ModelWire, steps: readonly ScriptStep[]): Promise<ScriptedModel> {
  const requests: CapturedRequest[] = [];
  let connections = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let parsed: { input?: unknown; messages?: unknown; tools?: unknown } = {};
      try {
        parsed = JSON.parse(body) as typeof parsed;
      } catch {
        // Not JSON: answered below as a bad request.
      }
      const toolOutputs = wire === 'openai-responses' ? openAiOutputs(parsed) : anthropicOutputs(parsed);
      requests.push({
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body,
        toolOutputs,
      });
      const expectedPath = wire === 'openai-responses' ? '/v1/responses' : '/v1/messages';
      if (request.method !== 'POST' || !(request.url ?? '').startsWith(expectedPath)) {
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end('{"error":{"message":"scripted model: unknown endpoint"}}');
        return;
      }
      // Claude Code sends side requests without tools (titles, summaries): answer them with text.
      const sideRequest = wire === 'anthropic-messages' && !(Array.isArray(parsed.tools) && parsed.tools.length > 0);
      const index = toolOutputs.length;
      const step: ScriptStep = sideRequest
        ? { kind: 'message', text: 'ok' }
        : (steps[index] ?? { kind: 'message', text: 'Finished the scripted steps.' });
      sse(response, wire === 'openai-responses' ? openAiTurn(step, index) : anthropicTurn(step, index));
    });
  });
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
