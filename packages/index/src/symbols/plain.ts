/**
 * The plain-text fallback for languages without a grammar here: a line that
 * opens with a definition keyword of a common language (def, class, func,
 * fn, function, struct, interface, module, sub) names a symbol. It misses
 * what it cannot see and says so (`source: 'plain'` on the file), rather
 * than pretending to parse.
 */
import type { CodeSymbol } from '../capsule.js';

const DEFINITION =
  /^[ \t]{0,16}(?:(?:export|public|private|protected|static|abstract|final|async|pub)[ \t]{1,4}){0,3}(def|class|func|fn|function|struct|interface|module|sub|trait|enum)[ \t]{1,8}([A-Za-z_$][\w$]{0,127})/;

const KIND: Readonly<Record<string, CodeSymbol['kind']>> = {
  def: 'function',
  func: 'function',
  fn: 'function',
  function: 'function',
  sub: 'function',
  class: 'class',
  struct: 'struct',
  interface: 'interface',
  module: 'module',
  trait: 'trait',
  enum: 'enum',
};

/** At most `limit` symbols; lines longer than 1,000 characters are skipped (minified or data, not definitions). */
export function plainSymbols(text: string, limit = 500): readonly CodeSymbol[] {
  const symbols: CodeSymbol[] = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length && symbols.length < limit; index++) {
    const line = lines[index] as string;
    if (line.length > 1000) continue;
    const match = DEFINITION.exec(line);
    if (match === null) continue;
    const kind = KIND[match[1] as string] ?? 'function';
    symbols.push({
      name: match[2] as string,
      kind,
      line: index + 1,
      exported: /^\s{0,16}(?:export|pub|public)\b/.test(line),
    });
  }
  return symbols;
}
