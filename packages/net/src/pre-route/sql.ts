/**
 * SQL by its statement shape: the lead keyword, then what that keyword must be
 * followed by. "Update the docs" and "Select the best option" start with SQL
 * keywords; what follows them is what tells SQL from prose. The patterns
 * capture words and this module checks them against keyword sets: keyword
 * alternations inside a pattern multiply what recheck must prove.
 */
import {
  SQL_FROM,
  SQL_IDENTIFIER_THEN,
  SQL_LEAD,
  SQL_SELECT_BODY,
  SQL_SHORT_STATEMENT,
  SQL_WITH_BODY,
} from './patterns.js';

/** Long enough for a two-word lead (`DELETE FROM`, `CREATE TABLE`) after some leading whitespace. */
const LEAD_WINDOW = 96;

/** Lead word → the second word it needs (null: none). */
const LEADS: ReadonlyMap<string, ReadonlySet<string> | null> = new Map([
  ['SELECT', null],
  ['UPDATE', null],
  ['WITH', null],
  ['INSERT', new Set(['INTO'])],
  ['DELETE', new Set(['FROM'])],
  ['CREATE', new Set(['TABLE', 'INDEX', 'VIEW', 'SCHEMA', 'UNIQUE'])],
  ['ALTER', new Set(['TABLE'])],
  ['DROP', new Set(['TABLE', 'INDEX', 'VIEW'])],
]);
const AFTER_NAME = new Set(['SET', 'VALUES', 'SELECT', 'WHERE', 'ADD', 'DROP', 'RENAME', 'ALTER', 'AS', 'ON', 'USING']);
const AFTER_COLUMN = new Set(['FROM', 'AS']);
const AFTER_CREATED_NAME = new Set(['AS', 'ON']);

interface Lead {
  readonly keyword: string;
  /** The upper-cased text after the lead, starting at the whitespace that ended it. */
  readonly rest: string;
}

function leadOf(head: string): Lead | null {
  const window = head.slice(0, LEAD_WINDOW).toUpperCase();
  const lead = SQL_LEAD.exec(window);
  if (lead === null) return null;
  const first = lead[1] as string;
  const seconds = LEADS.get(first);
  if (seconds === undefined) return null;
  const afterFirst = window.indexOf(first) + first.length;
  if (seconds === null) return { keyword: first, rest: head.slice(afterFirst).toUpperCase() };
  const second = lead[2];
  if (second === undefined || !seconds.has(second)) return null;
  return { keyword: `${first} ${second}`, rest: head.slice(lead.index + lead[0].length).toUpperCase() };
}

/** `text` without a leading `word` (after whitespace) that whitespace follows; `text` itself when it has none. */
function withoutWord(text: string, word: string): string {
  const trimmed = text.trimStart();
  const after = trimmed[word.length];
  return trimmed.startsWith(word) && after !== undefined && ' \t\r\n'.includes(after)
    ? trimmed.slice(word.length)
    : text;
}

function selectBody(rest: string): boolean {
  const body = withoutWord(rest, 'DISTINCT');
  const column = SQL_SELECT_BODY.exec(body);
  if (column === null) return false;
  const next = column[1] as string;
  if (next !== ',' && next !== ';' && next !== '' && !AFTER_COLUMN.has(next)) return false;
  return SQL_FROM.test(body) || SQL_SHORT_STATEMENT.test(body);
}

function nameThenKeyword(rest: string, keywords: ReadonlySet<string>): boolean {
  const named = SQL_IDENTIFIER_THEN.exec(rest);
  if (named === null) return false;
  return named[1] !== undefined || keywords.has(named[2] as string);
}

/** After CREATE TABLE/VIEW/INDEX/SCHEMA: an optional IF NOT EXISTS, a name, then `(`, AS, ON, `;` or the end. */
function createBody(rest: string): boolean {
  const guarded = withoutWord(withoutWord(withoutWord(rest, 'IF'), 'NOT'), 'EXISTS');
  return nameThenKeyword(guarded, AFTER_CREATED_NAME);
}

export function sqlStatement(head: string): boolean {
  const lead = leadOf(head);
  if (lead === null) return false;
  if (lead.keyword === 'SELECT') return selectBody(lead.rest);
  if (lead.keyword === 'WITH') return SQL_WITH_BODY.test(withoutWord(lead.rest, 'RECURSIVE'));
  if (lead.keyword === 'CREATE UNIQUE') {
    const index = withoutWord(lead.rest, 'INDEX');
    return index !== lead.rest && createBody(index);
  }
  if (lead.keyword.startsWith('CREATE')) return createBody(lead.rest);
  return nameThenKeyword(lead.rest, AFTER_NAME);
}
