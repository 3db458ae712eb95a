/**
 * The part of TOML that Codex's `config.toml` uses for `[mcp_servers.*]`:
 * `[dotted.table]` headers, `key = value` with strings (basic and literal),
 * integers, booleans, arrays of those, and one-line inline tables. Anything
 * else is an error naming the line, so a config we cannot read is never
 * half-imported. Keys outside the tables we read are parsed and ignored.
 */
import { err, ok, type Result } from '@crustcore/kernel';

export type TomlValue = string | number | boolean | readonly TomlValue[] | { readonly [key: string]: TomlValue };
export type TomlTable = { [key: string]: TomlValue };

class Cursor {
  index = 0;
  constructor(readonly text: string) {}
  peek(): string {
    return this.text[this.index] ?? '';
  }
  skipSpace(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.index += 1;
  }
  done(): boolean {
    this.skipSpace();
    return this.index >= this.text.length || this.peek() === '#';
  }
}

const BARE_KEY = /^[A-Za-z0-9_-]+/;
const ESCAPES: Readonly<Record<string, string>> = { n: '\n', t: '\t', r: '\r', '"': '"', '\\': '\\' };

function parseKey(cursor: Cursor): string {
  cursor.skipSpace();
  if (cursor.peek() === '"' || cursor.peek() === "'") return parseString(cursor);
  const match = BARE_KEY.exec(cursor.text.slice(cursor.index));
  if (match === null) throw new Error('expected a key');
  cursor.index += match[0].length;
  return match[0];
}

function parseDottedKey(cursor: Cursor): string[] {
  const parts = [parseKey(cursor)];
  cursor.skipSpace();
  while (cursor.peek() === '.') {
    cursor.index += 1;
    parts.push(parseKey(cursor));
    cursor.skipSpace();
  }
  return parts;
}

function parseString(cursor: Cursor): string {
  const quote = cursor.peek();
  cursor.index += 1;
  let out = '';
  for (;;) {
    const ch = cursor.peek();
    if (ch === '') throw new Error('unterminated string');
    cursor.index += 1;
    if (ch === quote) return out;
    if (ch === '\\' && quote === '"') {
      const escaped = cursor.peek();
      cursor.index += 1;
      if (escaped === 'u') {
        out += String.fromCodePoint(Number.parseInt(cursor.text.slice(cursor.index, cursor.index + 4), 16));
        cursor.index += 4;
      } else if (ESCAPES[escaped] !== undefined) out += ESCAPES[escaped];
      else throw new Error(`unknown escape \\${escaped}`);
    } else out += ch;
  }
}

function parseValue(cursor: Cursor): TomlValue {
  cursor.skipSpace();
  const ch = cursor.peek();
  if (ch === '"' || ch === "'") return parseString(cursor);
  if (ch === '[') return parseSequence(cursor, ']', () => parseValue(cursor)) as TomlValue[];
  if (ch === '{') {
    const table: TomlTable = {};
    parseSequence(cursor, '}', () => {
      const path = parseDottedKey(cursor);
      cursor.skipSpace();
      if (cursor.peek() !== '=') throw new Error('expected = in an inline table');
      cursor.index += 1;
      assign(table, path, parseValue(cursor));
      return null;
    });
    return table;
  }
  const word = /^(true|false|[+-]?\d[\d_]*)/.exec(cursor.text.slice(cursor.index));
  if (word === null) throw new Error('unsupported value (strings, integers, booleans, arrays, inline tables)');
  cursor.index += word[0].length;
  if (word[0] === 'true' || word[0] === 'false') return word[0] === 'true';
  return Number.parseInt(word[0].replaceAll('_', ''), 10);
}

function parseSequence<T>(cursor: Cursor, close: string, item: () => T): T[] {
  cursor.index += 1;
  const items: T[] = [];
  for (;;) {
    cursor.skipSpace();
    if (cursor.peek() === close) {
      cursor.index += 1;
      return items;
    }
    items.push(item());
    cursor.skipSpace();
    if (cursor.peek() === ',') cursor.index += 1;
    else if (cursor.peek() !== close) throw new Error(`expected , or ${close}`);
  }
}

function tableAt(root: TomlTable, path: readonly string[]): TomlTable {
  let table = root;
  for (const key of path) {
    const next = Object.hasOwn(table, key) ? table[key] : undefined;
    if (next === undefined) {
      const made: TomlTable = {};
      table[key] = made;
      table = made;
    } else if (typeof next === 'object' && !Array.isArray(next)) table = next as TomlTable;
    else throw new Error(`${path.join('.')} is not a table`);
  }
  return table;
}

function assign(root: TomlTable, path: readonly string[], value: TomlValue): void {
  const table = tableAt(root, path.slice(0, -1));
  const key = path[path.length - 1] as string;
  if (Object.hasOwn(table, key)) throw new Error(`${path.join('.')} is set twice`);
  table[key] = value;
}

/** Parses the subset; multi-line arrays are joined first (Codex writes `args = [\n "a",\n]`). */
export function parseTomlSubset(text: string): Result<string, TomlTable> {
  const root: TomlTable = {};
  let current = root;
  const lines = text.split(/\r?\n/);
  for (let number = 0; number < lines.length; number += 1) {
    let line = lines[number] as string;
    const first = number;
    while (/=\s*\[[^\]]*$/.test(line.replace(/#.*$/, '')) && number + 1 < lines.length) {
      number += 1;
      line += ` ${(lines[number] as string).trim()}`;
    }
    try {
      const cursor = new Cursor(line);
      if (cursor.done()) continue;
      if (cursor.peek() === '[') {
        if (line.trimStart().startsWith('[[')) throw new Error('arrays of tables are not supported');
        cursor.index += 1;
        const path = parseDottedKey(cursor);
        if (cursor.peek() !== ']') throw new Error('expected ]');
        cursor.index += 1;
        if (!cursor.done()) throw new Error('unexpected text after the table header');
        current = tableAt(root, path);
        continue;
      }
      const path = parseDottedKey(cursor);
      if (cursor.peek() !== '=') throw new Error('expected =');
      cursor.index += 1;
      const value = parseValue(cursor);
      if (!cursor.done()) throw new Error('unexpected text after the value');
      assign(current, path, value);
    } catch (error) {
      return err(`line ${first + 1}: ${(error as Error).message}`);
    }
  }
  return ok(root);
}
