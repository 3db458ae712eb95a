/**
 * stdio for the MCP server, with a bound on one message. The SDK's stdio
 * transport closes itself when a message exceeds its buffer (the IDE then
 * sees the server vanish). A guard in front of it counts bytes per line
 * instead: a line over the limit is never buffered whole — it is dropped, and
 * the caller gets a JSON-RPC error naming the limit (with the request's id,
 * recovered from the first or last bytes of the line, where JSON-RPC clients
 * put it). Lines within the limit pass through unchanged.
 */
import { type Readable, Transform, type TransformCallback, type Writable } from 'node:stream';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { MCP_LIMITS } from './limits.js';

const EDGE_BYTES = 512;
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
      this.push(Buffer.concat([...this.#parts, Buffer.from([NEWLINE])]));
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
