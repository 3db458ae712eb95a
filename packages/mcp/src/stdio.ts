/**
 * stdio for the MCP server, with a bound on one message. The SDK's stdio
 * transport closes itself when a message exceeds its buffer (the IDE then
 * sees the server vanish). A guard in front of it counts bytes per line
 * instead: a line over the limit is never buffered whole — it is dropped, and
 * the caller gets a JSON-RPC error naming the limit (with the request's id,
 * recovered from the first or last bytes of the line, where JSON-RPC clients
 * put it). A line within the limit that is not JSON (-32700) or not a
 * JSON-RPC 2.0 message (-32600) is answered here too; the server keeps
 * serving. Well-formed lines pass through unchanged.
 */
import { type Readable, Transform, type TransformCallback, type Writable } from 'node:stream';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import * as t from 'io-ts';
import { MCP_LIMITS } from './limits.js';

const EDGE_BYTES = 512;

/** Whitespace only (a stray CR or an empty line between messages): ignored, as the SDK does. */
const isBlank = (line: Buffer): boolean => line.every((byte) => byte === 0x20 || byte === 0x09 || byte === 0x0d);
const NEWLINE = 0x0a;

const ID_AT_START = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,15}|"(?:[^"\\]|\\.){0,128}")/;
const ID_AT_END = /[,{]\s*"id"\s*:\s*(-?\d{1,15}|"(?:[^"\\]|\\.){0,128}")\s*\}\s*$/;

/** The id of an oversized request, from its first and last bytes, or null. */
export function recoverRequestId(head: string, tail: string): string | number | null {
  const match = ID_AT_START.exec(head) ?? ID_AT_END.exec(tail);
  if (match === null) return null;
  try {
    const id: unknown = JSON.parse(match[1] as string);
    return typeof id === 'string' || typeof id === 'number' ? id : null;
  } catch {
    return null;
  }
}

/** What a JSON-RPC 2.0 message on this wire must look like (the SDK drops anything else without a word). */
const RequestIdC = t.union([t.string, t.Int]);
const ParamsC = t.union([t.UnknownRecord, t.undefined]);
const EnvelopeC = t.union([
  t.type({ jsonrpc: t.literal('2.0'), method: t.string, id: t.union([RequestIdC, t.undefined]), params: ParamsC }),
  t.type({ jsonrpc: t.literal('2.0'), id: RequestIdC, result: t.UnknownRecord }),
  t.type({
    jsonrpc: t.literal('2.0'),
    id: t.union([RequestIdC, t.null, t.undefined]),
    error: t.type({ code: t.Int, message: t.string }),
  }),
]);

const errorReply = (id: string | number | null, code: number, message: string): string =>
  `${JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })}\n`;

/** The id of a parsed value, when it has a usable one. */
function idOf(value: unknown): string | number | null {
  if (typeof value !== 'object' || value === null || !('id' in value)) return null;
  const id = (value as { id: unknown }).id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)) ? id : null;
}

/**
 * The JSON-RPC error for one line within the size bound, or null when it is a
 * well-formed message: -32700 for text that is not JSON, -32600 for JSON that
 * is not a JSON-RPC 2.0 message (batches included: MCP since 2025-06-18 has
 * none). The SDK's transport would report both to itself and answer nothing,
 * leaving the client to wait for its timeout.
 */
export function envelopeError(line: string): string | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    const why = error instanceof Error ? error.message.slice(0, 200) : 'not JSON';
    return errorReply(
      null,
      -32700,
      `parse error: the line is not JSON (${why}); send one JSON-RPC 2.0 message per line, UTF-8, newline-terminated`,
    );
  }
  if (Array.isArray(value))
    return errorReply(
      null,
      -32600,
      'invalid request: JSON-RPC batches are not supported by MCP; send one message per line',
    );
  if (EnvelopeC.decode(value)._tag === 'Right') return null;
  return errorReply(
    idOf(value),
    -32600,
    'invalid request: not a JSON-RPC 2.0 message; send {"jsonrpc":"2.0","id":<string|integer>,"method":<string>,"params":<object>} (a notification has no id)',
  );
}

export function oversizedReply(id: string | number | null, sizeBytes: number, maxMessageBytes: number): string {
  return `${JSON.stringify({
    jsonrpc: '2.0',
    id,
    error: {
      code: -32600,
      message: `request refused: it is ${sizeBytes} bytes, over the ${maxMessageBytes}-byte limit for one MCP message; split large changes into several stage_diff calls`,
    },
  })}\n`;
}

/** A Transform that passes whole lines of at most `maxMessageBytes`, and answers longer ones itself. */
export class MessageSizeGuard extends Transform {
  readonly #max: number;
  readonly #reply: (line: string) => void;
  #parts: Buffer[] = [];
  #size = 0;
  #oversized = false;
  #head = Buffer.alloc(0);
  #tail = Buffer.alloc(0);
  #refused = 0;

  constructor(maxMessageBytes: number, reply: (line: string) => void) {
    super();
    this.#max = maxMessageBytes;
    this.#reply = reply;
  }

  get refusedMessages(): number {
    return this.#refused;
  }

  #take(segment: Buffer): void {
    if (segment.length === 0) return;
    if (this.#oversized) {
      this.#size += segment.length;
      this.#tail = Buffer.concat([this.#tail, segment]).subarray(-EDGE_BYTES);
      return;
    }
    if (this.#size + segment.length <= this.#max) {
      this.#parts.push(segment);
      this.#size += segment.length;
      return;
    }
    const sofar = Buffer.concat([...this.#parts, segment]);
    this.#oversized = true;
    this.#head = sofar.subarray(0, EDGE_BYTES);
    this.#tail = sofar.subarray(-EDGE_BYTES);
    this.#size += segment.length;
    this.#parts = [];
  }

  #endLine(): void {
    if (this.#oversized) {
      this.#refused += 1;
      const id = recoverRequestId(this.#head.toString('utf8'), this.#tail.toString('utf8'));
      this.#reply(oversizedReply(id, this.#size, this.#max));
    } else if (this.#size > 0) {
      const line = Buffer.concat(this.#parts);
      const refusal = isBlank(line) ? '' : envelopeError(line.toString('utf8'));
      if (refusal === null) this.push(Buffer.concat([line, Buffer.from([NEWLINE])]));
      else if (refusal !== '') {
        this.#refused += 1;
        this.#reply(refusal);
      }
    }
    this.#parts = [];
    this.#size = 0;
    this.#oversized = false;
  }

  override _transform(chunk: Buffer | string, _encoding: BufferEncoding, callback: TransformCallback): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let start = 0;
    while (start < bytes.length) {
      const newline = bytes.indexOf(NEWLINE, start);
      if (newline === -1) {
        this.#take(bytes.subarray(start));
        break;
      }
      this.#take(bytes.subarray(start, newline));
      this.#endLine();
      start = newline + 1;
    }
    callback();
  }

  override _flush(callback: TransformCallback): void {
    if (this.#size > 0 || this.#oversized) this.#endLine();
    callback();
  }
}

/**
 * Serves `server` on stdin/stdout until stdin ends (the IDE closed it) or
 * the transport closes. Resolves when it is closed.
 */
export async function serveStdio(
  server: McpServer,
  options: { readonly stdin?: Readable; readonly stdout?: Writable; readonly maxMessageBytes?: number } = {},
): Promise<void> {
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const max = options.maxMessageBytes ?? MCP_LIMITS.maxMessageBytes;
  const guard = new MessageSizeGuard(max, (line) => stdout.write(line));
  stdin.pipe(guard);
  // The guard already bounds a line; the SDK's own buffer only needs to hold one.
  const transport = new StdioServerTransport(guard, stdout, { maxBufferSize: max + 1024 });
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    guard.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close().catch(() => undefined);
}
