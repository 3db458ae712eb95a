/**
 * A schema migration: a version, a name and an ordered list of single SQL
 * statements (both drivers run one statement per call with parameters).
 *
 * Released migrations never change: the runner records a checksum of each
 * one it applies and refuses to run against a database whose recorded
 * checksum differs. Change the schema by adding a migration.
 *
 * Statements use unqualified names: the runner sets the search_path to the
 * state schema, and every function captures it (`SET search_path FROM
 * CURRENT`) so triggers resolve the same tables whatever a later session's
 * search_path is.
 */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly statements: readonly string[];
}
