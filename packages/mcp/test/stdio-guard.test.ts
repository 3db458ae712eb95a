import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MessageSizeGuard, recoverRequestId } from '../src/index.js';

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
    const lines = ['{"jsonrpc":"2.0","id":1,"method":"ping"}', '{"a":"é✓"}', 'x'.repeat(100)];
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
});
