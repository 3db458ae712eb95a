/**
 * What a person is shown of a patch: the exact bytes, made readable and never
 * lying. Invalid UTF-8 bytes appear as `\x{HH}`, every concerning character
 * (characters.ts in @crustcore/safe-text) as `\u{…}`, file names the same way (decoded from git's
 * quoting), binary hunks as one line that says what is not shown. What was
 * escaped is counted per file, so surfaces can warn and the verifier can
 * raise the `hidden-content` risk for it.
 */

import {
  byteOrderMark,
  type CharacterConcern,
  declaredNonUtf8Encoding,
  decodeBytes,
  escapeConcerns,
} from '@crustcore/safe-text';
import { RISK_SEVERITY, type Risk } from '../risk.js';

export type ViewConcern =
  | CharacterConcern
  | 'invalid-utf8'
  | 'declared-encoding'
  | 'byte-order-mark'
  | 'binary-text-file';

export interface FileView {
  /** The file's name as shown (escaped). */
  readonly path: string;
  /** Concerns in this file's added lines and in its name. */
  readonly concerns: ReadonlyMap<ViewConcern, number>;
  readonly binary: boolean;
}

export interface PatchView {
  /** Display lines, each safe to print on a terminal. */
  readonly lines: readonly string[];
  readonly files: readonly FileView[];
}

interface FileState {
  path: string;
  concerns: Map<ViewConcern, number>;
  binary: boolean;
  firstAdded: boolean;
}

const count = (into: Map<ViewConcern, number>, concern: ViewConcern, n = 1): void => {
  if (n > 0) into.set(concern, (into.get(concern) ?? 0) + n);
};

function splitLines(bytes: Uint8Array): Uint8Array[] {
  const lines: Uint8Array[] = [];
  let start = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== 0x0a) continue;
    lines.push(bytes.subarray(start, i));
    start = i + 1;
  }
  if (start < bytes.length) lines.push(bytes.subarray(start));
  return lines;
}

const QUOTE_ESCAPES: Readonly<Record<string, number>> = {
  a: 7,
  b: 8,
  t: 9,
  n: 10,
  v: 11,
  f: 12,
  r: 13,
  '"': 34,
  '\\': 92,
};

/** Git's C-quoted name (`"a/t\303\244b"`) back to its bytes; unquoted text is taken as it is. */
function nameBytes(text: string): Uint8Array {
  if (!(text.startsWith('"') && text.endsWith('"') && text.length >= 2)) return new TextEncoder().encode(text);
  const out: number[] = [];
  const body = text.slice(1, -1);
  for (let i = 0; i < body.length; i++) {
    const ch = body[i] as string;
    if (ch !== '\\') {
      out.push(...new TextEncoder().encode(ch));
      continue;
    }
    const next = body[i + 1] ?? '';
    const octal = body.slice(i + 1, i + 4);
    if (/^[0-7]{3}$/.test(octal)) {
      out.push(Number.parseInt(octal, 8) & 0xff);
      i += 3;
    } else {
      out.push(QUOTE_ESCAPES[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return new Uint8Array(out);
}

/** A name as a person should read it, with what it hides counted into `into`. */
function shownName(text: string, into: Map<ViewConcern, number>): string {
  const decoded = decodeBytes(nameBytes(text));
  count(into, 'invalid-utf8', decoded.invalidBytes);
  const escaped = escapeConcerns(decoded.text);
  for (const [concern, n] of escaped.concerns) count(into, concern, n);
  return escaped.text;
}

const stripPrefix = (name: string): string => name.replace(/^"?[ab]\//, (m) => (m.startsWith('"') ? '"' : ''));

// File types that are text by nature: a binary hunk for one of them hides content a person should read.
const TEXT_EXTENSION =
  /\.(?:[cm]?[jt]sx?|py|pyi|rb|sh|bash|zsh|fish|ps1|bat|cmd|go|rs|java|kt|kts|scala|c|cc|cpp|cxx|h|hh|hpp|cs|swift|m|mm|php|pl|pm|lua|r|sql|json|jsonc|json5|ya?ml|toml|ini|cfg|conf|env|xml|html?|css|scss|less|vue|svelte|md|mdx|rst|txt|csv|tsv|gradle|properties|lock|mk|cmake|dockerfile|tf|hcl|nix|ex|exs|erl|hs|ml|clj|dart|zig|v|sv|vhd|proto|graphql|gql)$/i;

function looksLikeText(path: string): boolean {
  const base = path.split('/').pop() ?? path;
  return TEXT_EXTENSION.test(base) || !base.includes('.') || base.startsWith('.');
}

/** Builds the view of a whole `git diff --binary` patch. */
export function viewPatch(bytes: Uint8Array): PatchView {
  const lines: string[] = [];
  const files: FileState[] = [];
  let file: FileState | null = null;
  let binaryLines = 0;
  const flushBinary = (): void => {
    if (binaryLines === 0) return;
    lines.push(`[binary content: ${binaryLines} encoded lines not shown]`);
    binaryLines = 0;
  };
  for (const raw of splitLines(bytes)) {
    const decoded = decodeBytes(raw);
    const text = decoded.text;
    if (text.startsWith('diff --git ')) {
      flushBinary();
      file = { path: '', concerns: new Map(), binary: false, firstAdded: true };
      files.push(file);
      lines.push(headerLine(text, file));
      continue;
    }
    if (file !== null && (file.binary || text === 'GIT binary patch')) {
      if (text === 'GIT binary patch') {
        file.binary = true;
        lines.push(text);
      } else if (/^(?:literal|delta) \d+$/.test(text)) {
        flushBinary();
        lines.push(text);
      } else if (text !== '') binaryLines++;
      continue;
    }
    lines.push(contentLine(raw, text, decoded.invalidBytes, file));
  }
  flushBinary();
  return { lines, files: files.map(finishFile) };
}

function headerLine(text: string, file: FileState): string {
  // `diff --git a/x b/x`: the b-side name is the file's name after the patch.
  const rest = text.slice('diff --git '.length);
  const quotedPair = /^("(?:[^"\\]|\\.)*"|\S+) ("(?:[^"\\]|\\.)*"|\S+)$/.exec(rest);
  const newName = quotedPair?.[2] ?? rest;
  file.path = shownName(stripPrefix(newName), file.concerns);
  return `diff --git ${file.path}`;
}

function contentLine(raw: Uint8Array, text: string, invalidBytes: number, file: FileState | null): string {
  // A CR right before the newline the split removed is a Windows line ending, not a hiding character.
  const crlf = text.endsWith('\r');
  const body = crlf ? text.slice(0, -1) : text;
  const escaped = escapeConcerns(body);
  const header = /^(?:\+\+\+|---|rename from|rename to|copy from|copy to) /.exec(text);
  if (header !== null && file !== null) {
    const name = text.slice(header[0].length);
    return `${header[0]}${name === '/dev/null' ? name : shownName(stripPrefix(name), new Map())}`;
  }
  if (file !== null && text.startsWith('+')) {
    count(file.concerns, 'invalid-utf8', invalidBytes);
    for (const [concern, n] of escaped.concerns) count(file.concerns, concern, n);
    if (declaredNonUtf8Encoding(text.slice(1)) !== null) count(file.concerns, 'declared-encoding');
    if (file.firstAdded && byteOrderMark(raw.subarray(1)) !== null) count(file.concerns, 'byte-order-mark');
    file.firstAdded = false;
  }
  return crlf ? `${escaped.text}\r` : escaped.text;
}

function finishFile(file: FileState): FileView {
  if (file.binary && looksLikeText(file.path)) count(file.concerns, 'binary-text-file');
  return { path: file.path, concerns: file.concerns, binary: file.binary };
}

const CONCERN_WORDS: Readonly<Record<ViewConcern, string>> = {
  control: 'control characters',
  'line-break': 'characters some languages read as line breaks',
  bidi: 'bidirectional controls',
  invisible: 'invisible characters',
  'odd-space': 'unusual spaces',
  'look-alike': 'look-alike letters',
  'invalid-utf8': 'bytes that are not UTF-8',
  'declared-encoding': 'a declared non-UTF-8 encoding',
  'byte-order-mark': 'a byte-order mark',
  'binary-text-file': 'binary content in a text file (not shown)',
};

/** One warning line per file that hides something, for every surface that shows the patch. */
export function describeViewConcerns(view: PatchView): string[] {
  return view.files
    .filter((file) => file.concerns.size > 0)
    .map((file) => {
      const parts = [...file.concerns].map(([concern, n]) => `${n} × ${CONCERN_WORDS[concern]}`);
      return `${file.path}: ${parts.join(', ')} (shown as \\u{…} / \\x{…})`;
    });
}

/** The `hidden-content` risk: a person must see what escapes and encodings hide before it is applied. */
export function patchViewRisks(view: PatchView): Risk[] {
  const paths = view.files.filter((file) => file.concerns.size > 0).map((file) => file.path);
  if (paths.length === 0) return [];
  return [
    {
      kind: 'hidden-content',
      severity: RISK_SEVERITY['hidden-content'],
      detail: 'the patch has characters, bytes or binary content a terminal would not show as they are',
      paths: paths.slice(0, 50),
    },
  ];
}
