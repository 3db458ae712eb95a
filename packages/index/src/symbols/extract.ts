/**
 * Symbols from source text with tree-sitter grammars run as WASM
 * (web-tree-sitter + the grammars @vscode/tree-sitter-wasm ships). The WASM
 * runtime and each grammar load once per process, on first use; a file's
 * tree is freed as soon as its symbols are read.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Language, type Node, Parser, Query } from 'web-tree-sitter';
import type { CodeSymbol, SymbolKind } from '../capsule.js';
import { GRAMMAR_FILES, type GrammarName, QUERIES } from './queries.js';

interface LoadedGrammar {
  readonly parser: Parser;
  readonly query: Query;
}

const require = createRequire(import.meta.url);
let runtime: Promise<void> | null = null;
const grammars = new Map<GrammarName, Promise<LoadedGrammar>>();

async function loadGrammar(name: GrammarName): Promise<LoadedGrammar> {
  runtime ??= Parser.init();
  await runtime;
  const bytes = await readFile(require.resolve(`@vscode/tree-sitter-wasm/wasm/${GRAMMAR_FILES[name]}`));
  const language = await Language.load(new Uint8Array(bytes));
  const parser = new Parser();
  parser.setLanguage(language);
  return { parser, query: new Query(language, QUERIES[name]) };
}

function grammar(name: GrammarName): Promise<LoadedGrammar> {
  let loaded = grammars.get(name);
  if (loaded === undefined) {
    loaded = loadGrammar(name);
    // A failed load is not cached: the next file may try again (and report the same error).
    loaded.catch(() => grammars.delete(name));
    grammars.set(name, loaded);
  }
  return loaded;
}

const KINDS: ReadonlySet<string> = new Set<SymbolKind>([
  'function',
  'method',
  'class',
  'interface',
  'type',
  'enum',
  'struct',
  'trait',
  'constant',
  'module',
  'macro',
]);

/** A TS/JS definition is exported when an export statement holds it (directly or through its declaration). */
function exportedInScript(node: Node): boolean {
  let at: Node | null = node.parent;
  for (let depth = 0; at !== null && depth < 3; depth++, at = at.parent) {
    if (at.type === 'export_statement') return true;
    if (at.type !== 'lexical_declaration' && at.type !== 'variable_declaration') return false;
  }
  return false;
}

function isExported(language: GrammarName, node: Node, name: string): boolean {
  if (language === 'go') return /^[A-Z]/.test(name);
  if (language === 'rust') return node.namedChildren.some((child) => child?.type === 'visibility_modifier');
  if (language === 'python') {
    const holder = node.parent?.type === 'decorated_definition' ? node.parent.parent : node.parent;
    return holder?.type === 'module' && !name.startsWith('_');
  }
  return exportedInScript(node);
}

/** Methods belong to the class, impl or struct around them: TS/JS methods, Go receivers, Rust impl items. */
function kindOf(language: GrammarName, captured: string, node: Node): SymbolKind {
  if (language === 'rust' && captured === 'function' && node.parent?.type === 'declaration_list') return 'method';
  if (language === 'python' && captured === 'function') {
    const block = node.parent?.type === 'decorated_definition' ? node.parent.parent : node.parent;
    if (block?.type === 'block' && block.parent?.type === 'class_definition') return 'method';
  }
  return captured as SymbolKind;
}

/** Symbols in source order (by line, then name); null when the grammar cannot load. */
export async function extractSymbols(language: GrammarName, text: string): Promise<readonly CodeSymbol[]> {
  const { parser, query } = await grammar(language);
  const tree = parser.parse(text);
  if (tree === null) return [];
  try {
    const seen = new Map<string, CodeSymbol>();
    for (const match of query.matches(tree.rootNode)) {
      const name = match.captures.find((capture) => capture.name === 'name')?.node.text;
      const definition = match.captures.find((capture) => KINDS.has(capture.name));
      if (name === undefined || definition === undefined) continue;
      const line = definition.node.startPosition.row + 1;
      const key = `${line}\u0000${name}`;
      // An exported arrow function matches as a function and as a constant: the function wins.
      if (seen.has(key) && definition.name === 'constant') continue;
      const kind = kindOf(language, definition.name, definition.node);
      seen.set(key, { name, kind, line, exported: isExported(language, definition.node, name) });
    }
    return [...seen.values()].sort((a, b) => a.line - b.line || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } finally {
    tree.delete();
  }
}
