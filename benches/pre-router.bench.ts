/**
 * Pre-router cost per input (issue #15 item 4): p50 per input over a mix of
 * prompts (prose, each recognised class, near misses) and over adversarial
 * 8 KiB inputs, against a no-op that reads the same inputs in the same run.
 * Target ≤ 1 µs per input; krusch-pre-router reports 3.51 µs p50 on its own
 * hardware (seed 001) — a reference, not a same-run baseline.
 */
import { preRoute } from '@crustcore/net';
import { ratio, report, runCases } from './harness.js';

const MIX: readonly string[] = [
  'Please make the failing test pass without changing the public API.',
  'Add a --json flag to the status command and document it.',
  'Why does this fail?\n```ts\nconst x: number = "a";\n```',
  'Traceback (most recent call last):\n  File "/srv/app.py", line 3, in <module>\n    main()\nValueError: bad',
  'TypeError: x is undefined\n    at run (/srv/app/index.js:10:5)\n    at node:internal/main:1:1',
  'panic: boom\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/main.go:8 +0x1d',
  "thread 'main' panicked at src/main.rs:4:5:\nexplicit panic",
  'Exception in thread "main" java.lang.IllegalStateException\n\tat a.b.C.run(C.java:12)',
  'SELECT id, name FROM users WHERE id = 1;',
  'Select the best option from the list below.',
  '--- a/x.ts\n+++ b/x.ts\n@@ -1,2 +1,2 @@\n-a\n+b',
  '{"tool": "read_file", "path": "src/a.ts"}',
  'Prove $$\\sum_{i=1}^{n} i = \\frac{n(n+1)}{2}$$ by induction.',
  'Update the readme with the new flags',
  'With this change, the parser accepts tabs.',
  'Refactor the cache so entries expire after an hour; keep the tests green.',
];

const KIB = 1024;
const fill = (unit: string): string => unit.repeat(Math.ceil((8 * KIB) / unit.length)).slice(0, 8 * KIB);
const ADVERSARIAL: readonly string[] = [
  fill('a'),
  fill('\n    at a:1'),
  fill("thread 'a' panicked at "),
  fill('\n  File "'),
  fill('```'),
  fill('SELECT '),
  fill('$$\\'),
  fill('\n--- a\n+++ b'),
];

let sink = 0;
const noop = (inputs: readonly string[]) => () => {
  for (const input of inputs) sink += input.length;
};
const classify = (inputs: readonly string[]) => () => {
  for (const input of inputs) sink += preRoute(input)._tag.length;
};

const rows = await runCases('pre-router', [
  { name: 'no-op over the prompt mix', fn: noop(MIX), itemsPerCall: MIX.length },
  { name: 'preRoute over the prompt mix', fn: classify(MIX), itemsPerCall: MIX.length },
  { name: 'no-op over adversarial 8 KiB inputs', fn: noop(ADVERSARIAL), itemsPerCall: ADVERSARIAL.length },
  { name: 'preRoute over adversarial 8 KiB inputs', fn: classify(ADVERSARIAL), itemsPerCall: ADVERSARIAL.length },
]);
const [noopMix, mix, noopAdversarial, adversarial] = rows as [
  (typeof rows)[0],
  (typeof rows)[0],
  (typeof rows)[0],
  (typeof rows)[0],
];
ratio('preRoute vs no-op (prompt mix)', mix, noopMix, '≤ 1 µs per input');
ratio('preRoute vs no-op (adversarial 8 KiB)', adversarial, noopAdversarial);
report(
  'prompt mix p50 per input vs krusch-pre-router 3.51 µs',
  `${(mix.perItemP50Us / 3.51).toFixed(2)}× (${mix.perItemP50Us.toFixed(3)} µs)`,
);
if (sink === -1) console.log(sink);
