/**
 * A scripted model server on 127.0.0.1 speaking the OpenAI Chat Completions
 * streaming protocol (SSE chunks, per-index tool-call argument fragments,
 * usage chunk, `[DONE]`). Each request is recorded — headers and the exact
 * body bytes — and answered by the script's next turn. Tests use it to see
 * everything the agent sent a model, on the wire.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
  readonly json: { messages?: { role: string; content: unknown; tool_calls?: unknown }[] } & Record<string, unknown>;
}

export interface ServerTurn {
  /** Wait this long before answering (so a test can type while the model "thinks"). */
  readonly delayMs?: number;
  /** Answer only once this settles: a handshake, so a test can act while the model "thinks" on any machine. */
  readonly hold?: Promise<unknown>;
  readonly text?: string;
  readonly thinking?: string;
  readonly calls?: readonly { readonly name: string; readonly arguments: Record<string, unknown> }[];
}

export interface ModelServer {
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

const chunk = (delta: object, finish: string | null = null): string =>
  `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'scripted', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

function framesFor(turn: ServerTurn, callBase: number): string[] {
  const frames = [chunk({ role: 'assistant', content: '' })];
  if (turn.thinking !== undefined) frames.push(chunk({ reasoning_content: turn.thinking }));
  const text = turn.text ?? '';
  for (let index = 0; index < text.length; index += 40) frames.push(chunk({ content: text.slice(index, index + 40) }));
  (turn.calls ?? []).forEach((call, index) => {
    const id = `call_${callBase + index}`;
    frames.push(chunk({ tool_calls: [{ index, id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    const args = JSON.stringify(call.arguments);
    for (let at = 0; at < args.length; at += 50)
      frames.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(at, at + 50) } }] }));
  });
  frames.push(chunk({}, (turn.calls ?? []).length > 0 ? 'tool_calls' : 'stop'));
  frames.push(
    `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'scripted', choices: [], usage: { prompt_tokens: 900, completion_tokens: 40, total_tokens: 940 } })}\n\n`,
  );
  frames.push('data: [DONE]\n\n');
  return frames;
}

/** `script(request, index)` answers request number `index` (0-based). */
export async function startModelServer(
  script: (request: RecordedRequest, index: number) => ServerTurn,
): Promise<ModelServer> {
  const requests: RecordedRequest[] = [];
  const open = new Set<ServerResponse>();
  let calls = 0;
  const server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (piece: Buffer) => chunks.push(piece));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: RecordedRequest['json'] = {};
      try {
        json = JSON.parse(body) as RecordedRequest['json'];
      } catch {
        json = {};
      }
      const recorded: RecordedRequest = { url: incoming.url ?? '', headers: incoming.headers, body, json };
      const index = requests.length;
      requests.push(recorded);
      open.add(response);
      response.on('close', () => open.delete(response));
      let turn: ServerTurn;
      try {
        turn = script(recorded, index);
      } catch (error) {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message: String(error) } }));
        return;
      }
      const frames = framesFor(turn, calls + 1);
      calls += (turn.calls ?? []).length;
      void Promise.resolve(turn.hold).then(() =>
        setTimeout(() => {
          if (response.destroyed) return;
          response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
          response.end(frames.join(''));
        }, turn.delayMs ?? 0),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: async () => {
      for (const response of open) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A registry file for the server: one keyless (or keyed) OpenAI-compatible provider. */
export function registryFor(server: ModelServer, keyName?: string): string {
  return JSON.stringify({
    version: 1,
    defaultRole: 'implement',
    providers: [
      {
        id: 'scripted',
        kind: 'openai-compatible',
        baseUrl: server.baseUrl,
        ...(keyName === undefined ? {} : { key: `secret://${keyName}` }),
        models: [{ id: 'scripted-model', tools: true, contextWindow: 200000, roles: ['implement', 'summarize'] }],
      },
    ],
  });
}

/** The last tool message's text in a request (what the model was just told). */
export function lastToolResult(request: RecordedRequest): string {
  const messages = request.json.messages ?? [];
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (message?.role === 'tool') return String(message.content);
  }
  return '';
}
