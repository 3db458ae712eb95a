/**
 * A scripted provider on 127.0.0.1 that keeps the books a real one would:
 * every request that reaches it is billed, and every output token it
 * streams is billed whether or not the client stays for the final usage
 * event. Budget tests compare what the proxy charged with these books.
 *
 * Answers are decided per request by `plan` (the request's wire, path and
 * parsed body in, an `Answer` out). Holding is by handshake, never by time:
 * `hold` parks every response until the test calls `release()`, and a
 * response with `cutAfterDeltas` streams its deltas and then waits for the
 * connection to close instead of finishing.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ModelWire } from '../src/index.js';

export interface BilledRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface Answer {
  /** Output tokens to generate (`TOKENS_PER_DELTA` per delta, text taken round-robin from `DELTA_TEXTS`). */
  readonly outputTokens: number;
  /** Input tokens the final usage reports. */
  readonly inputTokens: number;
  /** Model the answer names. */
  readonly model: string;
  /** Stream every delta, then stop sending (no final usage) and wait for the connection to close. */
  readonly cutAfterDeltas?: boolean;
  /** Answer as a background job: at once, JSON, no usage; the job is billed anyway. */
  readonly background?: boolean;
}

export interface BillingUpstream {
  readonly origin: string;
  readonly billed: BilledRequest[];
  /** Output tokens streamed (billed) so far, and background jobs queued. */
  readonly billedOutputTokens: () => number;
  readonly backgroundJobs: () => number;
  /** Connections the upstream saw closed by the other side before it finished an answer. */
  readonly cutsSeen: () => number;
  /** Resolves once `count` requests have arrived. */
  readonly arrived: (count: number) => Promise<void>;
  /** Cuts every open connection (an upstream dying mid-answer), keeping the server up. */
  readonly dropConnections: () => void;
  /** Resolves once `count` cut answers have seen their connection close. */
  readonly cut: (count: number) => Promise<void>;
  /** Lets held answers go. */
  readonly release: () => void;
  readonly close: () => Promise<void>;
}

/** One token each, in several scripts (UTF-8 lengths 1 to 4), so byte counting is not ASCII-only. */
export const DELTA_TEXTS = ['a', ' the', 'é', '漢', '🙂', ' budget', '\n', '"'] as const;
/**
 * Tokens per streamed delta. Providers send a few tokens per delta; fewer,
 * larger events also keep the key redactor in the pass-through fast.
 */
export const TOKENS_PER_DELTA = 20;

type Waiter = { readonly count: number; readonly resolve: () => void };

function sseEvent(response: ServerResponse, data: Record<string, unknown>): void {
  response.write(`event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** Delta `index` of an answer with `total` tokens: TOKENS_PER_DELTA tokens (fewer in the last one). */
function deltaEvent(wire: ModelWire, index: number, total: number): Record<string, unknown> {
  const first = index * TOKENS_PER_DELTA;
  const count = Math.min(TOKENS_PER_DELTA, total - first);
  const text = Array.from({ length: count }, (_, offset) => DELTA_TEXTS[(first + offset) % DELTA_TEXTS.length]).join(
    '',
  );
  return wire === 'openai-responses'
    ? { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: text }
    : { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } };
}

function openingEvents(wire: ModelWire, answer: Answer): Record<string, unknown>[] {
  return wire === 'openai-responses'
    ? [
        {
          type: 'response.created',
          response: { id: 'resp_1', model: answer.model, status: 'in_progress', usage: null },
        },
      ]
    : [
        {
          type: 'message_start',
          message: {
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            model: answer.model,
            content: [],
            usage: { input_tokens: answer.inputTokens, output_tokens: 1 },
          },
        },
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      ];
}

function closingEvents(wire: ModelWire, answer: Answer): Record<string, unknown>[] {
  return wire === 'openai-responses'
    ? [
        {
          type: 'response.completed',
          response: {
            id: 'resp_1',
            model: answer.model,
            status: 'completed',
            usage: { input_tokens: answer.inputTokens, output_tokens: answer.outputTokens },
          },
        },
      ]
    : [
        { type: 'content_block_stop', index: 0 },
        { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: answer.outputTokens } },
        { type: 'message_stop' },
      ];
}

export async function startBillingUpstream(
  wire: ModelWire,
  plan: (request: BilledRequest, parsed: Record<string, unknown>) => Answer,
  options: { readonly hold?: boolean; readonly onArrival?: () => void } = {},
): Promise<BillingUpstream> {
  const billed: BilledRequest[] = [];
  let outputTokens = 0;
  let jobs = 0;
  let cuts = 0;
  let released = options.hold !== true;
  const held: (() => void)[] = [];
  const arrivals: Waiter[] = [];
  const cutWaiters: Waiter[] = [];
  const wake = (waiters: Waiter[], value: number): void => {
    for (const waiter of waiters.splice(0)) {
      if (value >= waiter.count) waiter.resolve();
      else waiters.push(waiter);
    }
  };
  const answer = (response: ServerResponse, reply: Answer): void => {
    if (reply.background === true) {
      jobs += 1;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ id: 'resp_bg', object: 'response', status: 'queued', model: reply.model, usage: null }),
      );
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const event of openingEvents(wire, reply)) sseEvent(response, event);
    for (let index = 0; index * TOKENS_PER_DELTA < reply.outputTokens; index += 1) {
      sseEvent(response, deltaEvent(wire, index, reply.outputTokens));
    }
    outputTokens += reply.outputTokens;
    if (reply.cutAfterDeltas === true) {
      // A keep-alive comment after the last delta: the key redactor upstream of the client holds back a
      // short tail (a key could straddle two chunks), and this is what it holds instead of a delta.
      response.write(`: ${'keep-alive '.repeat(800)}\n\n`);
      response.on('close', () => {
        cuts += 1;
        wake(cutWaiters, cuts);
      });
      return;
    }
    for (const event of closingEvents(wire, reply)) sseEvent(response, event);
    response.end();
  };
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      const entry = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body };
      billed.push(entry);
      wake(arrivals, billed.length);
      options.onArrival?.();
      let parsed: Record<string, unknown> = {};
      try {
        parsed = JSON.parse(body) as Record<string, unknown>;
      } catch {
        // Not JSON (a file upload, a GET): billed all the same, answered with the plan's defaults.
      }
      const reply = plan(entry, parsed);
      if (released) answer(response, reply);
      else held.push(() => answer(response, reply));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const until = (waiters: Waiter[], current: () => number, count: number): Promise<void> =>
    current() >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve }));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    billed,
    billedOutputTokens: () => outputTokens,
    backgroundJobs: () => jobs,
    cutsSeen: () => cuts,
    arrived: (count) => until(arrivals, () => billed.length, count),
    cut: (count) => until(cutWaiters, () => cuts, count),
    dropConnections: () => server.closeAllConnections(),
    release: () => {
      released = true;
      for (const go of held.splice(0)) go();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
