/**
 * The pre-router: each class recognised on real-shaped inputs, near misses
 * rejected, the 8 KiB head bound honoured, and every pattern in its catalog
 * certified free of super-linear backtracking by `recheck` (pure backend:
 * no binary, no JVM) and exercised on adversarial 8 KiB inputs built from
 * its own alphabet.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PRE_ROUTE_HEAD_CHARS, PRE_ROUTER_PATTERNS, type PreRoute, preRoute } from '../src/index.js';

const KIB = 1024;

const PYTHON = `Traceback (most recent call last):
  File "/srv/app/main.py", line 12, in <module>
    main()
  File "/srv/app/main.py", line 8, in main
    1 / 0
ZeroDivisionError: division by zero`;
const NODE = `TypeError: Cannot read properties of undefined (reading 'x')
    at parse (/home/u/proj/src/parse.js:14:22)
    at Object.<anonymous> (/home/u/proj/index.js:3:1)
    at node:internal/main/run_main_module:28:49`;
const GO = `panic: runtime error: index out of range [3] with length 3

goroutine 1 [running]:
main.main()
	/home/u/proj/main.go:8 +0x1d
exit status 2`;
const RUST = `thread 'main' panicked at src/main.rs:4:5:
called \`Option::unwrap()\` on a \`None\` value
note: run with \`RUST_BACKTRACE=1\` environment variable to display a backtrace`;
const JAVA = `Exception in thread "main" java.lang.NullPointerException
	at com.example.app.Service.handle(Service.java:42)
	at com.example.app.Main.main(Main.java:10)`;
const DIFF = `diff --git a/src/calc.js b/src/calc.js
--- a/src/calc.js
+++ b/src/calc.js
@@ -1,3 +1,3 @@
 export function add(a, b) {
-  return a - b;
+  return a + b;
 }`;

const hit = (kind: string, language: string | null = null): PreRoute => ({ _tag: 'Hit', kind, language }) as PreRoute;

describe('pre-router classes', () => {
  it.each([
    ['python traceback', PYTHON, hit('stack-trace', 'python')],
    ['node stack', NODE, hit('stack-trace', 'javascript')],
    ['go panic', GO, hit('stack-trace', 'go')],
    ['rust panic', RUST, hit('stack-trace', 'rust')],
    ['java exception', JAVA, hit('stack-trace', 'java')],
    ['unified diff', DIFF, hit('diff')],
    ['fence with language', 'Why does this fail?\n```py\nprint(1)\n```', hit('code-fence', 'python')],
    ['fence without language', '```\nls -la\n```', hit('code-fence', null)],
    ['tilde fence', '~~~rust\nfn main() {}\n~~~', hit('code-fence', 'rust')],
    ['json object', '{"name": "crustcore", "version": 1}', hit('json')],
    ['json array', '  [1, 2, {"a": null}]\n', hit('json')],
    ['display maths', 'Solve $$\\sum_{i=1}^{n} i = \\frac{n(n+1)}{2}$$ please', hit('latex')],
    ['math environment', '\\begin{align*} a &= b \\end{align*}', hit('latex')],
    ['select', 'SELECT id, name FROM users WHERE id = 1;', hit('sql')],
    ['lowercase select', 'select count(*) from orders', hit('sql')],
    ['select without from', 'SELECT 1;', hit('sql')],
    ['insert', 'INSERT INTO t (a, b) VALUES (1, 2);', hit('sql')],
    ['update', 'update accounts set balance = 0 where id = 7', hit('sql')],
    ['delete', 'DELETE FROM sessions WHERE expires < now();', hit('sql')],
    ['create table', 'CREATE TABLE IF NOT EXISTS notes (id serial primary key)', hit('sql')],
    ['cte', 'WITH recent AS (SELECT * FROM t) SELECT * FROM recent', hit('sql')],
    ['drop', 'DROP TABLE users;', hit('sql')],
    ['unique index', 'create unique index if not exists idx_a on t (a)', hit('sql')],
    ['select distinct', 'SELECT DISTINCT name FROM people', hit('sql')],
    ['kotlin frames with spaces', 'java.lang.Error: x\n    at app.MainKt.main(Main.kt:3)', hit('stack-trace', 'java')],
  ])('%s', (_name, input, expected) => {
    expect(preRoute(input)).toEqual(expected);
  });

  it.each([
    ['prose', 'Please make the tests pass and keep the public API stable.'],
    ['prose starting with Select', 'Select the best option from the list below.'],
    ['prose starting with Update', 'Update the readme with the new flags'],
    ['prose starting with With', 'With this change, the parser accepts tabs.'],
    ['prose starting with Insert', 'Insert into the box the red ball, then close it'],
    ['times are not frames', 'Error: we meet\n  at the station 10:30:45'],
    ['a traceback header alone', 'Traceback (most recent call last): nothing else'],
    ['goroutine mentioned in prose', 'a goroutine [running]: is what we saw'],
    ['prices are not maths', 'It costs $$5 or $$6 in total'],
    ['a markdown link is not JSON', '[link](https://example.com)'],
    ['broken JSON', '{"a": 1,'],
    ['a diff header without hunks', '--- a/x\n+++ b/x\nno hunk'],
    ['backticks inline', 'use `npm test` to run'],
    ['prose starting with Create', 'Create a table of contents for the docs'],
    ['prose starting with Drop', 'Drop the table from the report, it is stale'],
    ['a JS frame is not a JVM frame', 'Error: x\n\tat run (app.js:1)'],
    ['empty', ''],
  ])('near miss: %s', (_name, input) => {
    expect(preRoute(input)).toEqual({ _tag: 'Miss' });
  });

  it('a diff wins over the stack trace it carries', () => {
    expect(preRoute(`${DIFF}\n+${NODE.split('\n').join('\n+')}`)).toEqual(hit('diff'));
  });
});

describe('the 8 KiB head bound', () => {
  it('nothing after the head changes the answer', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(PYTHON, NODE, GO, RUST, JAVA, DIFF, 'plain words', 'SELECT 1;'),
        fc.string({ maxLength: 64 }),
        fc.string({ minLength: 1, maxLength: 512 }),
        (sample, pad, tail) => {
          const head = `${sample}\n${pad}`.padEnd(PRE_ROUTE_HEAD_CHARS, ' ').slice(0, PRE_ROUTE_HEAD_CHARS);
          expect(preRoute(head + tail)).toEqual(preRoute(head));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a structure that starts past the head is not seen (CONTROL: the same inside the head is)', () => {
    const filler = 'x'.repeat(PRE_ROUTE_HEAD_CHARS);
    expect(preRoute(`${filler}\n${PYTHON}`)).toEqual({ _tag: 'Miss' });
    expect(preRoute(`${filler.slice(0, 100)}\n${PYTHON}`)).toEqual(hit('stack-trace', 'python'));
  });

  it('JSON longer than the head is an honest miss', () => {
    const big = JSON.stringify({ items: Array.from({ length: 2000 }, (_, i) => i) });
    expect(big.length).toBeGreaterThan(PRE_ROUTE_HEAD_CHARS);
    expect(preRoute(big)).toEqual({ _tag: 'Miss' });
  });
});

describe('property: classes survive surrounding prose, prose alone is a miss', () => {
  const word = fc.stringMatching(/^[a-z]{1,10}$/);
  const prose = fc.array(word, { minLength: 1, maxLength: 30 }).map((words) => words.join(' '));

  it('a stack trace after a line of prose keeps its language', () => {
    fc.assert(
      fc.property(
        prose,
        fc.constantFrom([PYTHON, 'python'], [NODE, 'javascript'], [GO, 'go'], [RUST, 'rust'], [JAVA, 'java']),
        (intro, [trace, language]) => {
          expect(preRoute(`${intro}\n${trace}`)).toEqual(hit('stack-trace', language));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('lowercase prose of words is never a hit', () => {
    fc.assert(
      fc.property(prose, (text) => {
        expect(preRoute(text)).toEqual({ _tag: 'Miss' });
      }),
      { numRuns: 500 },
    );
  });

  it('a fence keeps its language word whatever precedes it', () => {
    fc.assert(
      fc.property(prose, fc.constantFrom('go', 'rust', 'python', 'sql', 'typescript'), (intro, language) => {
        expect(preRoute(`${intro}\n\`\`\`${language}\ncode\n\`\`\``)).toEqual(hit('code-fence', language));
      }),
    );
  });
});

/** Inputs of `size` characters that keep the catalog's anchors firing and its quantifiers at their bounds. */
function adversarialInputs(size: number): string[] {
  const fill = (unit: string): string => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
  const units = [
    '```',
    '\n   ```',
    '\n  File "',
    '\n    at a:1',
    '\n\tat a.b(',
    '\n\tat a.b(C.java:',
    'goroutine 1 [',
    '\n\t/x.go:1',
    "thread 'a' panicked at ",
    '\n--- a\n+++ b',
    '\n@@ -1,1 +1',
    'SELECT ',
    ' FROM ',
    'WITH a (',
    '\\begin{equation',
    '$$\\',
    '[ ',
    '{ ',
    ' \t\r\n',
    'a',
    '"',
  ];
  return units.flatMap((unit) => [fill(unit), `${fill(unit).slice(0, size - 1)}!`]);
}

describe('pattern safety', () => {
  it('recheck finds no super-linear backtracking in any pre-router pattern', { timeout: 600_000 }, async () => {
    process.env.RECHECK_BACKEND = 'pure';
    const { checkSync } = await import('recheck');
    const verdicts = PRE_ROUTER_PATTERNS.map(({ id, regex }) => {
      // The automaton checker proves (fuzzing only samples); the catalog is written so it applies to every pattern.
      const result = checkSync(regex.source, regex.flags, { timeout: 120_000, checker: 'automaton' });
      return { id, status: result.status, checker: result.checker };
    });
    expect(verdicts.filter((v) => v.status !== 'safe' || v.checker !== 'automaton')).toEqual([]);
  });

  it('CONTROL: recheck flags a pattern whose attempts overlap (the rust pattern before its fix)', async () => {
    process.env.RECHECK_BACKEND = 'pure';
    const { checkSync } = await import('recheck');
    // The rust-panic pattern before its fix: attempts from each repeated "panicked at " overlap on one line.
    expect(checkSync('panicked at [^\\n]*\\.rs:[0-9]+', '', { timeout: 60_000, checker: 'automaton' }).status).toBe(
      'vulnerable',
    );
  });

  it('every pattern answers on adversarial 8 KiB inputs, and so does the classifier', () => {
    const inputs = adversarialInputs(8 * KIB);
    for (const input of inputs) {
      expect(input.length).toBe(8 * KIB);
      for (const { regex } of PRE_ROUTER_PATTERNS) expect(typeof regex.test(input)).toBe('boolean');
      expect(preRoute(input)._tag).toMatch(/^(Hit|Miss)$/);
    }
  });
});
