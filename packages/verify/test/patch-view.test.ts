/**
 * The patch view shows a person the bytes that will be written. Each case is
 * a way a patch can read differently from how a program acts on it; the view
 * must escape it, count it for the file, and raise `hidden-content`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  concernOf,
  declaredNonUtf8Encoding,
  decodeBytes,
  describeViewConcerns,
  escapeConcerns,
  escapeHiding,
  patchViewRisks,
  viewPatch,
} from '../src/index.js';

const enc = new TextEncoder();
const bytesOf = (...parts: (string | number[])[]): Uint8Array =>
  new Uint8Array(parts.flatMap((part) => (typeof part === 'string' ? [...enc.encode(part)] : part)));

const filePatch = (name: string, added: (string | number[])[]): Uint8Array =>
  bytesOf(
    `diff --git a/${name} b/${name}\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/${name}\n@@ -0,0 +1 @@\n+`,
    ...added,
    '\n',
  );

// Characters a terminal shows as nothing, as a space, or as something else, in every class of the table.
const HIDING: readonly [string, string][] = [
  ['escape sequence', '\u001b[2J'],
  ['bell', '\u0007'],
  ['lone carriage return', 'ok();\rbad();'],
  ['C1 CSI', '\u009b31m'],
  ['JS line separator', '// note\u2028run()'],
  ['paragraph separator', '// note\u2029run()'],
  ['next line', 'a\u0085b'],
  ['vertical tab', 'a\u000Bb'],
  ['form feed', 'a\u000Cb'],
  ['right-to-left override', '/*\u202E } \u2066if (admin)\u2069 \u2066 */'],
  ['left-to-right isolate', 'x\u2066y'],
  ['arabic letter mark', 'x\u061Cy'],
  ['zero-width space', 'pass\u200Bword'],
  ['zero-width joiner', 'a\u200Db'],
  ['word joiner', 'a\u2060b'],
  ['BOM inside a line', 'a\uFEFFb'],
  ['soft hyphen', 'ad\u00ADmin'],
  ['hangul filler', 'let \u3164 = 1'],
  ['tag characters', 'a\u{E0041}\u{E0042}b'],
  ['variation selector', 'a\uFE0Fb'],
  ['private use', 'a\uE000b'],
  ['no-break space', 'if\u00A0(x)'],
  ['ideographic space', 'a\u3000b'],
  ['fullwidth letters', 'ｅｖａｌ(x)'],
  ['mathematical letters', '𝐞𝐯𝐚𝐥(x)'],
  ['cyrillic a in a latin word', 'const p\u0430ssword = 1'],
  ['greek omicron in a latin word', 'is_r\u03BFot = true'],
];

describe('patch view: every hiding character is shown and counted', () => {
  it.each(HIDING)('%s', (_name, text) => {
    const view = viewPatch(filePatch('src/app.js', [text]));
    const shown = view.lines.join('\n');
    const raw = [...text].filter((ch) => escapeConcerns(ch).text !== ch || ch === '\r');
    for (const ch of raw) expect(shown).not.toContain(ch);
    expect(shown).toMatch(/\\u\{[0-9A-F]+\}/);
    expect(view.files[0]?.concerns.size).toBeGreaterThan(0);
    expect(patchViewRisks(view).map((risk) => risk.kind)).toEqual(['hidden-content']);
    expect(patchViewRisks(view)[0]?.severity).toBe('needs-approval');
  });

  it('control: the same text decoded plainly keeps the hiding characters (the attack is real)', () => {
    for (const [, text] of HIDING) {
      const plain = new TextDecoder().decode(filePatch('src/app.js', [text]));
      expect(plain).toContain(text);
    }
  });

  it('ordinary text in any script is left as it is and raises nothing', () => {
    const ordinary = [
      'const total = a + b;',
      'Grüße, für Jürgen',
      'приветствие мир',
      '日本語のコメント（全角）',
      'café résumé',
      '\t\tindent',
    ];
    for (const text of ordinary) {
      const view = viewPatch(filePatch('src/app.js', [text]));
      expect(view.lines).toContain(`+${text}`);
      expect(patchViewRisks(view)).toEqual([]);
    }
  });

  it('a Windows line ending is not a concern; a carriage return elsewhere is', () => {
    expect(viewPatch(filePatch('a.txt', ['line\r'])).files[0]?.concerns.size).toBe(0);
    expect(viewPatch(filePatch('a.txt', ['li\rne'])).files[0]?.concerns.get('control')).toBe(1);
  });

  it('chat text keeps look-alike letters but never hiding ones', () => {
    expect(escapeHiding('（全角）ｅｖａｌ')).toBe('（全角）ｅｖａｌ');
    expect(escapeHiding('a\u202Eb\u200Bc')).toBe('a\\u{202E}b\\u{200B}c');
    expect(escapeHiding('a\u202Eb', 'json')).toBe('a\\u202Eb');
    expect(JSON.parse(`"${escapeHiding('x\u{E0041}y', 'json')}"`)).toBe('x\u{E0041}y');
  });
});

describe('patch view: bytes that are not UTF-8 are shown byte for byte', () => {
  const cases: readonly [string, number[]][] = [
    ['Shift-JIS with a backslash trail byte', [0x83, 0x5c, 0x22]],
    ['GBK', [0xc4, 0xe3, 0xba, 0xc3]],
    ['Latin-1', [0x63, 0x61, 0x66, 0xe9]],
    ['overlong slash', [0xc0, 0xaf]],
    ['UTF-16 surrogate encoded in UTF-8', [0xed, 0xa0, 0x80]],
    ['above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
    ['truncated sequence', [0xe2, 0x82]],
    ['stray continuation', [0x80]],
  ];
  it.each(cases)('%s', (_name, bytes) => {
    const view = viewPatch(filePatch('lib/x.py', ['s = "', bytes, '"']));
    const line = view.lines.find((l) => l.startsWith('+s'));
    expect(line).toMatch(/\\x\{[0-9A-F]{2}\}/);
    expect(line).not.toContain('\uFFFD');
    expect(view.files[0]?.concerns.get('invalid-utf8')).toBeGreaterThan(0);
    expect(patchViewRisks(view)).toHaveLength(1);
  });

  it('control: a lossy decoder turns each of them into U+FFFD, hiding which byte it was', () => {
    expect(new TextDecoder().decode(new Uint8Array([0x83, 0x5c]))).toBe('\uFFFD\\');
  });

  it('decodes every byte sequence losslessly (property: valid UTF-8 round-trips, invalid bytes are counted)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const bytes = enc.encode(text);
        const decoded = decodeBytes(bytes);
        expect(decoded.invalidBytes).toBe(0);
        expect(decoded.text).toBe(text);
      }),
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const decoded = decodeBytes(bytes);
        const valid = (() => {
          try {
            new TextDecoder('utf-8', { fatal: true }).decode(bytes);
            return true;
          } catch {
            return false;
          }
        })();
        expect(decoded.invalidBytes === 0).toBe(valid);
      }),
    );
  });
});

describe('patch view: declared encodings and binary content', () => {
  it.each([
    ['# -*- coding: utf-7 -*-'],
    ['# vim: set fileencoding=shift_jis :'],
    ['#coding=latin-1'],
    ['<?xml version="1.0" encoding="UTF-16"?>'],
    ['@charset "gbk";'],
    ['<meta charset="windows-1252">'],
    ['// -*- coding: cp1252 -*-'],
  ])('%s is a declared non-UTF-8 encoding', (line) => {
    expect(declaredNonUtf8Encoding(line)).not.toBeNull();
    const view = viewPatch(filePatch('m.py', [line]));
    expect(view.files[0]?.concerns.get('declared-encoding')).toBe(1);
  });

  it('code that merely mentions an encoding is not a declaration', () => {
    for (const line of ["readFileSync(p, { encoding: 'latin1' })", '# coding: utf-8', 'x = "coding: utf-7"'])
      expect(declaredNonUtf8Encoding(line)).toBeNull();
  });

  it('a binary hunk for a text file is named and raises the risk; an image stays informational', () => {
    const binary = (name: string): Uint8Array =>
      bytesOf(
        `diff --git a/${name} b/${name}\nindex 1111111..2222222 100644\nGIT binary patch\nliteral 12\nTcmZ?wb+Zr3N3\n\nliteral 0\nHcmV?d00001\n\n`,
      );
    const script = viewPatch(binary('src/run.js'));
    expect(script.lines.join('\n')).toContain('[binary content: 1 encoded lines not shown]');
    expect(script.files[0]?.concerns.get('binary-text-file')).toBe(1);
    expect(patchViewRisks(script)).toHaveLength(1);
    expect(patchViewRisks(viewPatch(binary('assets/logo.png')))).toEqual([]);
  });
});

describe('patch view: file names', () => {
  it.each([
    ['bidi override', 'src/\u202Esj.txt'],
    ['escape sequence', 'x\u001b[2Jy.js'],
    ['zero-width', 'pack\u200Bage.json'],
    ['look-alike', 'p\u0430ckage.json'],
  ])('a name with a %s is escaped in the header and counted', (_name, name) => {
    // Git C-quotes names with controls and non-ASCII bytes; the view decodes them and escapes what hides.
    const quoted = `"b/${[...enc.encode(name)].map((b) => (b < 0x20 || b > 0x7e ? `\\${b.toString(8).padStart(3, '0')}` : String.fromCharCode(b))).join('')}"`;
    const patch = bytesOf(
      `diff --git ${quoted.replace('"b/', '"a/')} ${quoted}\nnew file mode 100644\n--- /dev/null\n+++ ${quoted}\n@@ -0,0 +1 @@\n+x\n`,
    );
    const view = viewPatch(patch);
    const header = view.lines[0] ?? '';
    expect(header).toMatch(/\\u\{[0-9A-F]+\}/);
    expect(view.files[0]?.concerns.size).toBeGreaterThan(0);
    expect(describeViewConcerns(view)[0]).toContain(view.files[0]?.path);
  });

  it('every single code point the table names is escaped wherever it stands (property)', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 0, max: 0x10ffff }), fc.string(), (before, code, after) => {
        if (code >= 0xd800 && code <= 0xdfff) return;
        const ch = String.fromCodePoint(code);
        if (concernOf(ch) === null) return;
        const shown = escapeConcerns(`${before}${ch}${after}`).text;
        expect(escapeConcerns(shown).concerns.size).toBe(0);
      }),
    );
  });
});
