/**
 * Bytes to text without losing any: valid UTF-8 decodes as itself, every byte
 * that is not part of a valid sequence is shown as `\x{HH}`. A lossy decoder
 * would print U+FFFD for all of them, and an approver could not tell which
 * byte an interpreter will actually read (in Shift-JIS, GBK or Big5 a byte the
 * terminal drops can swallow a quote or a backslash).
 */

export interface DecodedBytes {
  readonly text: string;
  readonly invalidBytes: number;
}

const hexByte = (byte: number): string => `\\x{${byte.toString(16).toUpperCase().padStart(2, '0')}}`;

/** Length of the valid UTF-8 sequence starting at `i`, or 0 when the byte there starts none. */
function sequenceLength(bytes: Uint8Array, i: number): number {
  const b0 = bytes[i] ?? 0;
  if (b0 < 0x80) return 1;
  let length: number;
  let min: number;
  let max: number;
  if (b0 >= 0xc2 && b0 <= 0xdf) [length, min, max] = [2, 0x80, 0xbf];
  else if (b0 === 0xe0) [length, min, max] = [3, 0xa0, 0xbf];
  else if (b0 === 0xed)
    [length, min, max] = [3, 0x80, 0x9f]; // no UTF-16 surrogates
  else if (b0 >= 0xe1 && b0 <= 0xef) [length, min, max] = [3, 0x80, 0xbf];
  else if (b0 === 0xf0) [length, min, max] = [4, 0x90, 0xbf];
  else if (b0 >= 0xf1 && b0 <= 0xf3) [length, min, max] = [4, 0x80, 0xbf];
  else if (b0 === 0xf4)
    [length, min, max] = [4, 0x80, 0x8f]; // nothing above U+10FFFF
  else return 0;
  if (i + length > bytes.length) return 0;
  const b1 = bytes[i + 1] ?? 0;
  if (b1 < min || b1 > max) return 0;
  for (let k = 2; k < length; k++) {
    const b = bytes[i + k] ?? 0;
    if (b < 0x80 || b > 0xbf) return 0;
  }
  return length;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function decodeBytes(bytes: Uint8Array): DecodedBytes {
  let text = '';
  let invalidBytes = 0;
  let runStart = 0;
  let i = 0;
  while (i < bytes.length) {
    const length = sequenceLength(bytes, i);
    if (length > 0) {
      i += length;
      continue;
    }
    if (i > runStart) text += utf8.decode(bytes.subarray(runStart, i));
    text += hexByte(bytes[i] ?? 0);
    invalidBytes++;
    i++;
    runStart = i;
  }
  if (runStart < bytes.length) text += utf8.decode(bytes.subarray(runStart));
  return { text, invalidBytes };
}

const ENCODING_DECLARATIONS: readonly RegExp[] = [
  // Python PEP 263, Ruby magic comments, Emacs and Vim modelines: only inside a comment, so
  // code such as `{ encoding: 'hex' }` is not taken for a declaration.
  /^\s*(?:#|\/\/|\/\*|\*|--|;|%|<!--).*?coding[:=]\s*["']?([-\w.]+)/i,
  /^\s*(?:#|\/\/|\/\*|\*|--|;|%|"|<!--).*\bfileencoding\s*=\s*([-\w.]+)/i,
  // XML declaration, CSS @charset, HTML meta charset.
  /<\?xml[^>]*\bencoding\s*=\s*["']([-\w.]+)/i,
  /@charset\s+["']([-\w.]+)/i,
  /<meta[^>]*\bcharset\s*=\s*["']?([-\w.]+)/i,
];

const DECLARATION_SCAN_CHARS = 512;

const UTF8_NAMES = new Set(['utf-8', 'utf8', 'utf_8', 'ascii', 'us-ascii', 'utf-8-sig', 'latin-1-unix']);

/** The encoding a line declares, when it names one other than UTF-8 or ASCII. */
export function declaredNonUtf8Encoding(line: string): string | null {
  // Declarations sit at the start of a line; the bound keeps every pattern linear on long lines.
  const head = line.slice(0, DECLARATION_SCAN_CHARS);
  for (const pattern of ENCODING_DECLARATIONS) {
    const name = pattern.exec(head)?.[1];
    if (name !== undefined && !UTF8_NAMES.has(name.toLowerCase())) return name;
  }
  return null;
}

/** A byte-order mark at the start, naming what it announces. */
export function byteOrderMark(bytes: Uint8Array): 'utf-8' | 'utf-16' | 'utf-32' | null {
  const [a, b, c, d] = bytes;
  if (a === 0xef && b === 0xbb && c === 0xbf) return 'utf-8';
  if ((a === 0xff && b === 0xfe && c === 0 && d === 0) || (a === 0 && b === 0 && c === 0xfe && d === 0xff))
    return 'utf-32';
  if ((a === 0xff && b === 0xfe) || (a === 0xfe && b === 0xff)) return 'utf-16';
  return null;
}
