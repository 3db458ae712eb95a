/**
 * The pre-router's pattern catalog. Every regex the pre-router runs is named
 * here and nowhere else, so the test suite can hand each one to `recheck`
 * (no super-linear backtracking) and to adversarial 8 KiB inputs. Rules the
 * catalog keeps: no quantified group contains another quantifier over an
 * overlapping alphabet, each pattern opens with a literal or a line start
 * so attempts cannot overlap, and multi-part structures are checked by
 * several small patterns rather than one long one. Quantifiers are left
 * unbounded on purpose: recheck's automaton checker can then prove each
 * pattern linear (large bounded repetitions push it to fuzzing, which only
 * samples), and the 8 KiB head bounds every input anyway.
 */

export interface NamedPattern {
  readonly id: string;
  readonly regex: RegExp;
}

/** A markdown fence opening a line: ``` or ~~~ and an optional info word (its language). */
export const FENCE_OPEN = /(?:^|\n)[ ]{0,3}(?:```|~~~)([A-Za-z0-9_+#.-]*)/;

// ─── stack traces ──────────────────────────────────────────────────────────

/** Python: a frame line of a traceback (the interpreter indents frames by two spaces). */
export const PYTHON_FRAME = /\n {2}File "[^"\n]+", line [0-9]/;
/** Node/JavaScript: `    at fn (file.js:12:34)` or `    at file.js:12:34`. */
export const NODE_FRAME = /\n[ \t]+at [^\n]*:[0-9]+:[0-9]+\)?[ \t\r]*(?:\n|$)/;
/** What a Node frame's location names: a path, a `node:` module, an anonymous function or a script file. */
export const NODE_FRAME_LOCATION = /[/\\]|node:|<anonymous>|\.[cm]?[jt]sx?:/;
/** Java/Kotlin/Scala: `\tat com.example.Type.method(Type.java:42)` (tab or four spaces); the caller checks the extension. */
export const JAVA_FRAME = /\n(?:\t| {4})at [\w$.<>/-]+\([\w$-]+\.([a-z]+):[0-9]/;
/** Go: the goroutine header of a panic or a fatal error. */
export const GO_GOROUTINE = /(?:^|\n)goroutine [0-9]+ \[[a-zA-Z ,0-9]+\]:/;
/** Go: a frame location line, `\t/path/file.go:42 +0x1d`. */
export const GO_FRAME = /\n\t[^\n]+\.go:[0-9]/;
/** Rust: the panic line's location (`thread 'main' panicked at src/main.rs:2:5`; the caller checks for `thread '`). */
export const RUST_PANIC = /panicked at [^\n ]+\.rs:[0-9]+:[0-9]/;

// ─── diffs ─────────────────────────────────────────────────────────────────

/** The `--- a` / `+++ b` header pair of a unified diff. */
export const DIFF_HEADER = /(?:^|\n)--- [^\n]+\n\+\+\+ /;
/** A hunk header, `@@ -1,3 +1,4 @@`. */
export const DIFF_HUNK = /(?:^|\n)@@ -[0-9]+(?:,[0-9]+)? \+[0-9]/;

// ─── SQL ───────────────────────────────────────────────────────────────────

/**
 * SQL patterns run on upper-cased text (sql.ts upper-cases what it tests), so they need no `i` flag:
 * case folding multiplies the automaton recheck must check. A comment before the statement is a miss.
 */
export const SQL_LEAD = /^[ \t\r\n]*([A-Z]+)(?:[ \t\r\n]+([A-Z]+))?/;
/** After SELECT: a column list's first item, then a comma, FROM/AS, or the end. */
export const SQL_SELECT_BODY = /^[ \t\r\n]*(?:\*|[A-Z0-9_"'`][A-Z0-9_".`']*(?:\([^()\n]*\))?)[ \t\r\n]*(,|;|$|[A-Z]+)/;
/** A statement with no FROM (`SELECT 1;`) counts when a semicolon ends its first line. */
export const SQL_SHORT_STATEMENT = /^[^\n;]*;/;
export const SQL_FROM = /[ \t\r\n]FROM[ \t\r\n]+[A-Z_"`(]/;
/** After UPDATE, INSERT INTO, DELETE FROM, ALTER/DROP …: a name, then the end, `(`, `;` or a keyword. */
export const SQL_IDENTIFIER_THEN = /^[ \t\r\n]*[A-Z_"`][A-Z0-9_".`]*(?:[ \t\r\n]*(;|\(|$)|[ \t\r\n]+([A-Z]+))/;
export const SQL_WITH_BODY = /^[ \t\r\n]*[A-Z_"`][A-Z0-9_"`]*[ \t\r\n]*(?:\([^()\n]*\)[ \t\r\n]*)?AS[ \t\r\n]*\(/;

// ─── LaTeX ─────────────────────────────────────────────────────────────────

/** A display or math environment. */
export const LATEX_ENVIRONMENT =
  /\\begin\{(?:equation|align|gather|multline|eqnarray|math|displaymath|cases|matrix|pmatrix|bmatrix|split)\*?\}/;
/** Inside `$$ … $$`, `\[ … \]` or `$ … $`: a control word or a braced sub/superscript (plain `$5 and $6` is not maths). */
export const LATEX_MATH_BODY = /\\[A-Za-z]+|[_^]\{|\\[{}]/;

// ─── JSON ──────────────────────────────────────────────────────────────────

/** The first token inside a JSON object or array (a bracket alone is not enough: `[link](url)`). */
export const JSON_OPENING = /^[ \t\r\n]*(?:\{[ \t\r\n]*(?:"|\})|\[[ \t\r\n]*(?:[-"{[\]0-9]|true|false|null))/;

/** Every pattern above, for the safety tests. */
export const PRE_ROUTER_PATTERNS: readonly NamedPattern[] = [
  { id: 'fence-open', regex: FENCE_OPEN },
  { id: 'python-frame', regex: PYTHON_FRAME },
  { id: 'node-frame', regex: NODE_FRAME },
  { id: 'node-frame-location', regex: NODE_FRAME_LOCATION },
  { id: 'java-frame', regex: JAVA_FRAME },
  { id: 'go-goroutine', regex: GO_GOROUTINE },
  { id: 'go-frame', regex: GO_FRAME },
  { id: 'rust-panic', regex: RUST_PANIC },
  { id: 'diff-header', regex: DIFF_HEADER },
  { id: 'diff-hunk', regex: DIFF_HUNK },
  { id: 'sql-lead', regex: SQL_LEAD },
  { id: 'sql-select-body', regex: SQL_SELECT_BODY },
  { id: 'sql-short-statement', regex: SQL_SHORT_STATEMENT },
  { id: 'sql-from', regex: SQL_FROM },
  { id: 'sql-identifier-then', regex: SQL_IDENTIFIER_THEN },
  { id: 'sql-with-body', regex: SQL_WITH_BODY },
  { id: 'latex-environment', regex: LATEX_ENVIRONMENT },
  { id: 'latex-math-body', regex: LATEX_MATH_BODY },
  { id: 'json-opening', regex: JSON_OPENING },
];
