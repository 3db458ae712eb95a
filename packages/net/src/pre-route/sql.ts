/**
 * SQL by its statement shape: the lead keyword, then what that keyword must be
 * followed by. "Update the docs" and "Select the best option" start with SQL
 * keywords; what follows them is what tells SQL from prose.
 */
import {
  SQL_CREATE_BODY,
  SQL_FROM,
  SQL_IDENTIFIER_THEN,
  SQL_LEAD,
  SQL_SELECT_BODY,
  SQL_SHORT_STATEMENT,
  SQL_WITH_BODY,
} from './patterns.js';

/** Long enough for the longest lead (`CREATE UNIQUE INDEX`) after some leading whitespace. */
const LEAD_WINDOW = 96;

export function sqlStatement(head: string): boolean {
  // Upper-case a short window first: most inputs are not SQL and never pay for the whole head.
  const lead = SQL_LEAD.exec(head.slice(0, LEAD_WINDOW).toUpperCase());
  if (lead === null) return false;
  const keyword = lead[1] as string;
  // Keep the whitespace that ended the lead: the body patterns expect to start at it.
  const rest = head.slice(lead.index + lead[0].length - 1).toUpperCase();
  if (keyword === 'SELECT')
    return SQL_SELECT_BODY.test(rest) && (SQL_FROM.test(rest) || SQL_SHORT_STATEMENT.test(rest));
  if (keyword === 'WITH') return SQL_WITH_BODY.test(rest);
  if (keyword.startsWith('CREATE')) return SQL_CREATE_BODY.test(rest);
  return SQL_IDENTIFIER_THEN.test(rest);
}
