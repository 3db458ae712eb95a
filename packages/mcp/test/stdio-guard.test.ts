import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { envelopeError, MessageSizeGuard, recoverRequestId } from '../src/index.js';

async function run(chunks: readonly string[], max: number): Promise<{ passed: string[]; replies: string[] }> {
  const replies: string[] = [];
  const guard = new MessageSizeGuard(max, (line) => replies.push(line));
  const out: Buffer[] = [];
  guard.on('data', (chunk: Buffer) => out.push(chunk));
  const source = new PassThrough();
  source.pipe(guard);
  for (const chunk of chunks) source.write(chunk);
  source.end();
  await new Promise((resolve) => guard.on('end', resolve));
  const passed = Buffer.concat(out)
    .toString('utf8')
    .split('\n')
    .filter((line) => line !== '');
  return { passed, replies };
}

describe('the stdin message-size guard', () => {
  it('passes lines within the bound unchanged, however the input is chunked', async () => {
    const lines = [
      '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      '{"jsonrpc":"2.0","method":"notifications/x","params":{"a":"é✓"}}',
      `{"jsonrpc":"2.0","id":"r","result":{"t":"${'x'.repeat(40)}"}}`,
    ];
    const text = `${lines.join('\n')}\n`;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: text.length }), { maxLength: 6 }), async (cuts) => {
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        const chunks: string[] = [];
        let last = 0;
        for (const point of points) {
          chunks.push(text.slice(last, point));
          last = point;
        }
        chunks.push(text.slice(last));
        const { passed, replies } = await run(chunks, 128);
        expect(passed).toEqual(lines);
        expect(replies).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });

  it('answers an oversized request with its id (id first or last) and keeps going', async () => {
    const big = 'y'.repeat(1_000);
    const { passed, replies } = await run(
      [
        `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"d":"${big}"}}\n`,
        `{"method":"tools/call","params":{"d":"${big}"},"jsonrpc":"2.0","id":"req-9"}\n`,
        `{"params":{"d":"${big}"}}\n`,
        '{"jsonrpc":"2.0","id":6,"method":"ping"}\n',
      ],
      256,
    );
    expect(passed).toEqual(['{"jsonrpc":"2.0","id":6,"method":"ping"}']);
    const parsed = replies.map((line) => JSON.parse(line) as { id: unknown; error: { code: number; message: string } });
    expect(parsed.map((reply) => reply.id)).toEqual([5, 'req-9', null]);
    for (const reply of parsed) {
      expect(reply.error.code).toBe(-32600);
      expect(reply.error.message).toMatch(/over the 256-byte limit/);
    }
  });

  it('recovers ids only from where JSON-RPC clients put them', () => {
    expect(recoverRequestId('{"id":12,"method":"x"', '')).toBe(12);
    expect(recoverRequestId('{"method":"x","params":{"task_id":"t_1"', '"jsonrpc":"2.0","id":3}')).toBe(3);
    expect(recoverRequestId('{"params":{"id":99', 'zzz')).toBeNull();
  });

  it('answers a line that is not JSON with -32700 and one that is not JSON-RPC with -32600, then keeps going', async () => {
    const { passed, replies } = await run(
      [
        '{"jsonrpc":"2.0","id":1,"method":"ping"\n',
        'plain words\n',
        '\n  \r\n',
        '{"jsonrpc":"2.0","id":2,"result":[]}\n',
        '[{"jsonrpc":"2.0","id":3,"method":"ping"}]\n',
        '{"jsonrpc":"2.0","id":4,"method":"ping"}\n',
      ],
      256,
    );
    expect(passed).toEqual(['{"jsonrpc":"2.0","id":4,"method":"ping"}']);
    const parsed = replies.map((line) => JSON.parse(line) as { id: unknown; error: { code: number } });
    expect(parsed.map((reply) => [reply.id, reply.error.code])).toEqual([
      [null, -32700],
      [null, -32700],
      [2, -32600],
      [null, -32600],
    ]);
  });

  it('judges envelopes: requests, notifications, results and errors pass; anything else is named', () => {
    const fine = [
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'x' } },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', id: 1, error: { code: -1, message: 'no' } },
    ];
    for (const message of fine) expect(envelopeError(JSON.stringify(message))).toBeNull();
    const bad: [unknown, number, unknown][] = [
      [{ jsonrpc: '2.0', id: 1.5, method: 'x' }, -32600, null],
      [{ jsonrpc: '2.0', id: true, method: 'x' }, -32600, null],
      [{ jsonrpc: '2.0', id: 7, method: 'x', params: 'text' }, -32600, 7],
      [{ jsonrpc: 2, id: 8, method: 'x' }, -32600, 8],
      [null, -32600, null],
    ];
    for (const [message, code, id] of bad) {
      const reply = JSON.parse(envelopeError(JSON.stringify(message)) ?? 'null') as {
        id: unknown;
        error: { code: number };
      };
      expect(reply.error.code, JSON.stringify(message)).toBe(code);
      expect(reply.id).toBe(id);
    }
    expect(JSON.parse(envelopeError('{"id": 1,') ?? 'null').error.code).toBe(-32700);
  });
});
