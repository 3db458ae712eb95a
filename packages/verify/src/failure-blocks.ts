/**
 * The first failing test's own part of a runner's output. Runners print one
 * block per failure; taking a message from one block and a location from
 * another (a mocha run once showed failure #3's message at failure #1's
 * place) misleads the next attempt. Pure text functions, no I/O.
 */

/** Where each runner starts the detail block of one failure (multiline, global). */
const BLOCK_STARTS: readonly { readonly runner: string; readonly start: RegExp; readonly after?: RegExp }[] = [
  // mocha spec: the list is repeated under "N failing" as "  1) suite\n       test:".
  { runner: 'mocha', start: /^ {2}\d+\) \S.*$/gm, after: /^\s*\d+ failing\s*$/m },
  // node --test spec reporter: "✖ name (1.2ms)" followed by the indented error.
  { runner: 'node-spec', start: /^\s*✖ (?!failing tests:?$).+\(\d[\d.]*m?s\)\s*$/gm },
  // TAP (node --test, mocha --reporter tap).
  { runner: 'tap', start: /^\s*not ok \d+ .*$/gm },
  // vitest "Failed Tests" section: " FAIL  file > test".
  { runner: 'vitest', start: /^\s*FAIL\s+\S.*>.*$/gm },
  // jest: "  ● suite › test".
  { runner: 'jest', start: /^\s*● .+ › .+$/gm },
  // pytest: "____ test_name ____".
  { runner: 'pytest', start: /^_{3,} \S.* _{3,}$/gm },
  // cargo: "---- tests::name stdout ----".
  { runner: 'cargo', start: /^---- \S+ stdout ----$/gm },
  // go test.
  { runner: 'go', start: /^\s*--- FAIL: \S+.*$/gm },
];

/** A block's first lines may only be this long before it is cut (bounds the work per failure). */
const MAX_BLOCK_CHARS = 6_000;

export interface FailureBlock {
  readonly runner: string;
  /** Offset of the block in the text. */
  readonly index: number;
  readonly text: string;
}

/** The detail blocks of one runner, in order; [] when the text has none. */
function blocksOf(text: string, entry: (typeof BLOCK_STARTS)[number]): FailureBlock[] {
  let offset = 0;
  if (entry.after !== undefined) {
    const header = entry.after.exec(text);
    if (header === null) return [];
    offset = header.index + header[0].length;
  }
  const region = text.slice(offset);
  const starts = [...region.matchAll(entry.start)].map((match) => match.index ?? 0);
  return starts.map((start, i) => {
    const end = starts[i + 1] ?? region.length;
    return {
      runner: entry.runner,
      index: offset + start,
      text: region.slice(start, Math.min(end, start + MAX_BLOCK_CHARS)),
    };
  });
}

/** Every failure block of the first runner format found in the text. */
export function failureBlocks(text: string): readonly FailureBlock[] {
  for (const entry of BLOCK_STARTS) {
    const blocks = blocksOf(text, entry);
    if (blocks.length === 0) continue;
    // TAP nests subtests: a parent's "not ok" follows its children; the first leaf comes first anyway.
    return blocks;
  }
  return [];
}

/** mocha's block title: "1) suite\n  nested\n    test:" → "suite nested test". */
export function mochaTitle(block: string): string | null {
  const lines = block.split('\n');
  const first = /^ {2}\d+\) (.*)$/.exec(lines[0] ?? '');
  if (first === null) return null;
  const parts = [(first[1] as string).trim()];
  if (parts[0]?.endsWith(':')) return (parts[0] as string).slice(0, -1);
  for (const line of lines.slice(1, 12)) {
    const trimmed = line.trim();
    if (trimmed === '') break;
    if (trimmed.endsWith(':')) {
      parts.push(trimmed.slice(0, -1));
      return parts.join(' ');
    }
    parts.push(trimmed);
  }
  return null;
}

const YAML_FIELD = /^\s*(?:duration_ms|location|failureType|code|name|operator|stack|type|at|expected|actual):/;
const ERROR_LINE = /(?:Error|Exception|panicked|assert|expected|Expected|FAIL|error)\b/;

/** The failure's own message: its first error-looking line, else its first non-title line. */
export function blockMessage(block: FailureBlock): string | null {
  const lines = block.text.split('\n').slice(1);
  for (let i = 0; i < lines.length; i += 1) {
    const line = (lines[i] as string).trim();
    if (line === '' || YAML_FIELD.test(line) || /^(?:-{3}|\.{3})$/.test(line)) continue;
    // TAP YAML: "error: |-" puts the message on the next lines; "error: 'text'" inline.
    const yaml = /^error:\s*(.*)$/.exec(line);
    if (yaml !== null) {
      const inline = (yaml[1] as string).replace(/^['"]|['"]$/g, '').trim();
      if (inline !== '' && !/^[|>]-?$/.test(inline)) return inline;
      continue;
    }
    if (!ERROR_LINE.test(line) && block.runner !== 'tap') continue;
    // mocha and node print "Expected values to be strictly equal:" and the values on a later line.
    if (line.endsWith(':')) {
      const next = lines
        .slice(i + 1, i + 4)
        .find((candidate) => candidate.trim() !== '' && !/^[+-] /.test(candidate.trim()));
      if (next !== undefined && !YAML_FIELD.test(next)) return `${line} ${next.trim()}`;
    }
    return line;
  }
  return null;
}
