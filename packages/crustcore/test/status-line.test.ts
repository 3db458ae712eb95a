/**
 * The live status line, driven by hand: ticks come from a ticker the test
 * holds and time from a clock it sets, so nothing depends on a timer firing.
 * What must hold: each narration line is preceded by an erase of the status
 * line and followed by a redraw; a pending approval prompt is never drawn
 * over; the task's end erases it for good; model use is summed; the line is
 * cut to the terminal's width; and it exists only for text output on a
 * terminal (never in pipes, `--json`, dumb terminals or CI).
 */
import { Writable } from 'node:stream';
import type { Action, KernelEvent } from '@crustcore/kernel';
import type { Narrator } from '@crustcore/runtime';
import { describe, expect, it } from 'vitest';
import { narrateWithStatus, StatusLine, wantsStatusLine } from '../src/render/status-line.js';

const ERASE = '\r\u001b[2K';
const plain = { bold: String, dim: String, red: String, green: String, yellow: String, cyan: String };

class Terminal extends Writable {
  written = '';
  readonly columns: number;
  constructor(columns = 80) {
    super();
    this.columns = columns;
  }
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.written += chunk.toString('utf8');
    done();
  }
}

function rig(columns?: number) {
  const terminal = new Terminal(columns);
  let tick: () => void = () => undefined;
  let stopped = false;
  let now = 1_000;
  const status = new StatusLine(terminal, plain, {
    nowMs: () => now,
    ticker: (fn) => {
      tick = fn;
      return () => {
        stopped = true;
      };
    },
  });
  const lines: string[] = [];
  const base: Narrator = {
    event: (event) => {
      terminal.write(`[line ${event.kind}]\n`);
      lines.push(event.kind);
    },
    note: () => undefined,
  };
  const narrator = narrateWithStatus(base, status);
  const send = (kind: string, actions: Action[] = [], fields: Record<string, unknown> = {}) =>
    narrator.event({ kind, ...fields } as unknown as KernelEvent, actions);
  return {
    terminal,
    status,
    send,
    tick: () => tick(),
    advance: (ms: number) => {
      now += ms;
    },
    isStopped: () => stopped,
  };
}

const action = (kind: string, fields: Record<string, unknown> = {}) => ({ kind, ...fields }) as unknown as Action;

describe('the live status line', () => {
  it('erases itself before each narration line and draws the current step after it', () => {
    const r = rig();
    r.send('TaskCreated');
    r.advance(2_500);
    r.send('WorktreeReady', [action('StartAttempt', { attempt: 1 })]);
    const afterStart = r.terminal.written;
    expect(afterStart).toContain(`${ERASE}[line WorktreeReady]\n`);
    expect(afterStart.endsWith('attempt 1: the worker is running · 2.5 s')).toBe(true);
    r.tick();
    // A tick redraws in place with the next spinner frame.
    expect(r.terminal.written.slice(afterStart.length)).toBe(`${ERASE}⠙ attempt 1: the worker is running · 2.5 s`);
    r.send('PatchProposed');
    expect(r.terminal.written.endsWith('verifying the patch in a fresh worktree · 2.5 s')).toBe(true);
  });

  it('is not drawn while an approval prompt waits, and comes back once it is answered', () => {
    const r = rig();
    r.send('PatchProposed');
    r.send('PatchVerified', [action('RequestApproval')]);
    const atPrompt = r.terminal.written;
    // Erased before the request's line, and not drawn after it: the prompt owns the terminal.
    expect(atPrompt.endsWith(`${ERASE}[line PatchVerified]\n`)).toBe(true);
    r.tick();
    r.tick();
    expect(r.terminal.written).toBe(atPrompt);
    r.send('ApprovalResolved', [], { decision: 'granted' });
    expect(r.terminal.written.endsWith('applying the patch · 0.0 s')).toBe(true);
  });

  it("is erased for good at the task's end", () => {
    const r = rig();
    r.send('TaskCreated');
    r.send('PatchApplied', [action('TaskFinished', { outcome: 'completed' })]);
    expect(r.isStopped()).toBe(true);
    const atEnd = r.terminal.written;
    expect(atEnd.endsWith(`[line PatchApplied]\n`)).toBe(true);
    r.status.draw();
    r.status.stop();
    expect(r.terminal.written).toBe(atEnd);
  });

  it('sums the model use the kernel was charged for', () => {
    const r = rig();
    r.send('ModelOutputReceived', [], { inputTokens: 1_200, outputTokens: 300, costMicros: 4_500 });
    r.send('ModelOutputReceived', [], { inputTokens: 100, outputTokens: 50, costMicros: 500 });
    expect(r.terminal.written.endsWith('starting · 0.0 s · 1650 tokens · $0.0050')).toBe(true);
  });

  it("is cut to the terminal's width, so one carriage return can erase it", () => {
    const r = rig(20);
    r.send('PatchProposed');
    const drawn = r.terminal.written.split(ERASE).pop() ?? '';
    expect([...drawn]).toHaveLength(19);
  });

  it('exists only for text output on a terminal that can move its cursor, outside CI', () => {
    expect(wantsStatusLine('text', { isTTY: true }, { TERM: 'xterm' })).toBe(true);
    expect(wantsStatusLine('json', { isTTY: true }, { TERM: 'xterm' })).toBe(false);
    expect(wantsStatusLine('stream-json', { isTTY: true }, {})).toBe(false);
    expect(wantsStatusLine('text', { isTTY: false }, {})).toBe(false);
    expect(wantsStatusLine('text', {}, {})).toBe(false);
    expect(wantsStatusLine('text', { isTTY: true }, { TERM: 'dumb' })).toBe(false);
    expect(wantsStatusLine('text', { isTTY: true }, { CI: 'true' })).toBe(false);
  });
});
