/**
 * The terminal guard every CLI write passes through: hiding characters come
 * out as visible escapes whatever the chunk type, the CLI's own style codes
 * pass, and `unguarded` gives readline the raw stream back.
 */
import { describe, expect, it } from 'vitest';
import { guardOutput, guardTerminalText, unguarded } from '../src/index.js';

/** A stand-in for a terminal stream that records what reaches it. */
class Recorder {
  readonly written: string[] = [];
  readonly isTTY = true;
  write(chunk: string): boolean {
    this.written.push(chunk);
    return true;
  }
}

describe('guardOutput', () => {
  it('escapes controls, bidi and invisible characters in strings and bytes; keeps the CLI styles', () => {
    const sink = new Recorder();
    const guarded = guardOutput(sink);
    guarded.write('\u001b[1mbold\u001b[22m \u001b[2Jclear \u202Eevil \u200Bzw\n');
    const bytes = [...new TextEncoder().encode('bytes \u001b]0;title\u0007 '), 0xff];
    guarded.write(new Uint8Array(bytes) as never);
    expect(sink.written[0]).toBe('\u001b[1mbold\u001b[22m \\u001B[2Jclear \\u202Eevil \\u200Bzw\n');
    // An invalid UTF-8 byte is shown as itself, never dropped or replaced by U+FFFD.
    expect(sink.written[1]).toBe('bytes \\u001B]0;title\\u0007 \\x{FF}');
    expect(guarded.isTTY).toBe(true);
  });

  it('control: the same text written to the raw stream reaches it unescaped', () => {
    const sink = new Recorder();
    unguarded(guardOutput(sink)).write('\u001b[2J\u202E');
    expect(sink.written).toEqual(['\u001b[2J\u202E']);
    expect(unguarded(sink)).toBe(sink);
  });

  it('keeps a JSON line valid JSON with the same meaning', () => {
    const line = JSON.stringify({ text: 'a\u2028b\u202Ec' });
    const guarded = guardTerminalText(line);
    expect(guarded).not.toMatch(/[\u2028\u202E]/);
    expect(JSON.parse(guarded)).toEqual({ text: 'a\u2028b\u202Ec' });
  });
});

describe('the plain-text fast path', () => {
  it('passes only characters the per-character path leaves alone too (forced there by a letter outside the set)', async () => {
    const { escapeConcerns, PLAIN_PUNCTUATION } = await import('../src/characters.js');
    for (const ch of PLAIN_PUNCTUATION) {
      const slow = escapeConcerns(`\u00e9 ${ch} x${ch}y`);
      expect(slow.text, ch).toBe(`\u00e9 ${ch} x${ch}y`);
      expect(slow.concerns.size, ch).toBe(0);
      expect(escapeConcerns(`a ${ch} b`).text).toBe(`a ${ch} b`);
    }
    // Controls, bidi and invisible characters still take the per-character path and are escaped.
    for (const hidden of ['\u0007', '\u202e', '\u200b', '\r'])
      expect(escapeConcerns(`a \u2014 ${hidden} b`).text).not.toContain(hidden);
  });
});
