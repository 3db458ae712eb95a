/**
 * `xtask tidy`: the repository's house rules that a type checker and a linter
 * do not see, checked in the test command (after TigerBeetle's `tidy`):
 *
 *  - no function longer than 70 lines. Today's longer ones are listed in
 *    xtask/tidy-long-functions.txt with their length; a listed function may
 *    shrink but not grow, and an entry whose function is now short enough (or
 *    gone) must be deleted, so the list only ever shrinks. Lengths are counted
 *    on the TypeScript syntax tree (first to last line of the function node);
 *  - no `export *` (packages export named bindings only);
 *  - size claims in the docs agree with the size gates in .size-limit.json.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

export const MAX_FUNCTION_LINES = 70;
export const RATCHET_FILE = 'xtask/tidy-long-functions.txt';

/** Where functions are measured: shipped code and repository tooling, not tests. */
const CODE_ROOTS = ['packages', 'xtask', 'scripts'] as const;
const SKIP_DIRS = new Set(['node_modules', 'dist', 'test', 'fixtures', 'assets', '.turbo']);

export interface LongFunction {
  /** `path#Outer.inner` (a second function of the same name gets `#2`). */
  readonly key: string;
  readonly lines: number;
}

function walk(dir: string, keep: (path: string) => boolean, out: string[]): string[] {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return out;
  }
  for (const name of names) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (!SKIP_DIRS.has(name) && !name.startsWith('.')) walk(path, keep, out);
    } else if (keep(path)) out.push(path);
  }
  return out;
}

const isTs = (path: string): boolean => path.endsWith('.ts') && !path.endsWith('.d.ts') && !path.endsWith('.test.ts');

export function codeFiles(root: string): string[] {
  return CODE_ROOTS.flatMap((dir) => walk(join(root, dir), isTs, []));
}

function nameOf(node: ts.Node, source: ts.SourceFile): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name !== undefined) return named.name.getText(source);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (parent !== undefined && ts.isVariableDeclaration(parent)) return parent.name.getText(source);
  if (parent !== undefined && ts.isPropertyAssignment(parent)) return parent.name.getText(source);
  if (parent !== undefined && ts.isPropertyDeclaration(parent)) return parent.name.getText(source);
  return '<anonymous>';
}

const isFunctionLike = (node: ts.Node): node is ts.FunctionLikeDeclaration =>
  ts.isFunctionDeclaration(node) ||
  ts.isMethodDeclaration(node) ||
  ts.isArrowFunction(node) ||
  ts.isFunctionExpression(node) ||
  ts.isConstructorDeclaration(node) ||
  ts.isGetAccessorDeclaration(node) ||
  ts.isSetAccessorDeclaration(node);

/** Every function of one file longer than `max` lines, named by its nesting. */
export function longFunctionsIn(path: string, text: string, max = MAX_FUNCTION_LINES): LongFunction[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: LongFunction[] = [];
  const seen = new Map<string, number>();
  const visit = (node: ts.Node, scope: readonly string[]): void => {
    let inner = scope;
    if (ts.isClassDeclaration(node) && node.name !== undefined) inner = [...scope, node.name.text];
    if (isFunctionLike(node) && node.body !== undefined) {
      inner = [...scope, nameOf(node, source)];
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      const base = `${path}#${inner.join('.')}`;
      const count = (seen.get(base) ?? 0) + 1;
      seen.set(base, count);
      if (lines > max) found.push({ key: count === 1 ? base : `${base}#${count}`, lines });
    }
    ts.forEachChild(node, (child) => visit(child, inner));
  };
  visit(source, []);
  return found;
}

export function parseRatchet(text: string): Map<string, number> {
  const entries = new Map<string, number>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const match = /^(\S+)\s+(\d+)$/.exec(line);
    if (match === null)
      throw new Error(`${RATCHET_FILE}: cannot read ${JSON.stringify(line)} (want "path#name lines")`);
    entries.set(match[1] as string, Number(match[2]));
  }
  return entries;
}

export function checkFunctionLengths(found: readonly LongFunction[], ratchet: ReadonlyMap<string, number>): string[] {
  const problems: string[] = [];
  const present = new Set<string>();
  for (const fn of found) {
    present.add(fn.key);
    const allowed = ratchet.get(fn.key);
    if (allowed === undefined)
      problems.push(`${fn.key}: ${fn.lines} lines (limit ${MAX_FUNCTION_LINES}); split it into named steps`);
    else if (fn.lines > allowed)
      problems.push(`${fn.key}: grew to ${fn.lines} lines (the ratchet allows ${allowed}); it may only shrink`);
  }
  for (const [key, lines] of ratchet) {
    if (!present.has(key))
      problems.push(`${RATCHET_FILE}: ${key} (${lines}) is short enough or gone now; delete the entry`);
  }
  return problems;
}

export function exportStarsIn(path: string, text: string): string[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const problems: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isExportDeclaration(statement)) continue;
    if (statement.exportClause === undefined || ts.isNamespaceExport(statement.exportClause)) {
      const line = source.getLineAndCharacterOfPosition(statement.getStart(source)).line + 1;
      problems.push(`${path}:${line}: \`export *\`; export the names one by one`);
    }
  }
  return problems;
}

/** The limits of .size-limit.json, in kB. */
export function sizeGates(sizeLimitJson: string): number[] {
  const entries = JSON.parse(sizeLimitJson) as readonly { readonly limit: string }[];
  return entries.map((entry) => {
    const match = /^([\d.]+)\s*kB$/.exec(entry.limit);
    if (match === null) throw new Error(`.size-limit.json: limit ${JSON.stringify(entry.limit)} is not in kB`);
    return Number(match[1]);
  });
}

const KB = String.raw`≈?\s*([\d.]+)\s*kB`;
const cells = (line: string): string[] =>
  line
    .split('|')
    .slice(1, -1)
    .map((c) => c.trim());

/**
 * Size claims in one markdown file. In a table with a `gate` column each gate
 * must be a real gate and each `measured` value within its gate. Elsewhere
 * "A kB ≤ B kB" needs A ≤ B with B a gate, "gated at B kB" and a bare
 * "≤ B kB" need B a gate — unless the line speaks of a `target`.
 */
export function docSizeClaims(
  path: string,
  text: string,
  gates: readonly number[],
): { problems: string[]; gatesSeen: Set<number> } {
  const problems: string[] = [];
  const gatesSeen = new Set<number>();
  const isGate = (value: number): boolean => gates.includes(value);
  let header: string[] | null = null;
  text.split('\n').forEach((line, index) => {
    const where = `${path}:${index + 1}`;
    const isRow = line.trimStart().startsWith('|');
    if (!isRow) header = null;
    else if (header === null) header = cells(line).map((c) => c.toLowerCase());
    const gateColumn = header?.indexOf('gate') ?? -1;
    if (isRow && header !== null && gateColumn >= 0 && !/^\|[\s|:-]+\|$/.test(line.trim())) {
      const row = cells(line);
      if (row.map((c) => c.toLowerCase()).join() === header.join()) return;
      const gate = new RegExp(KB).exec(row[gateColumn] ?? '');
      if (gate === null) {
        problems.push(`${where}: gate cell ${JSON.stringify(row[gateColumn])} names no kB`);
        return;
      }
      const limit = Number(gate[1]);
      gatesSeen.add(limit);
      if (!isGate(limit))
        problems.push(`${where}: gate ${limit} kB is not in .size-limit.json (${gates.join(', ')} kB)`);
      const measured = new RegExp(KB).exec(row[header.indexOf('measured')] ?? '');
      if (measured !== null && Number(measured[1]) > limit)
        problems.push(`${where}: measured ${measured[1]} kB is over its gate ${limit} kB`);
      return;
    }
    const paired = new Set<number>();
    for (const m of line.matchAll(new RegExp(`${KB}\\s*(?:≤|<=)\\s*([\\d.]+)\\s*kB`, 'g'))) {
      const [a, b] = [Number(m[1]), Number(m[2])];
      paired.add(m.index ?? -1);
      if (a > b) problems.push(`${where}: claims ${a} kB ≤ ${b} kB`);
      if (!isGate(b)) problems.push(`${where}: ${b} kB is not a size gate (${gates.join(', ')} kB)`);
    }
    if (/target/i.test(line)) return;
    for (const m of line.matchAll(/(?:gated at|≤|<=)\s*([\d.]+)\s*kB/g)) {
      const before = line.slice(0, m.index ?? 0);
      if (/[\d.]+\s*kB\s*$/.test(before)) continue; // the right side of a pair, checked above
      const value = Number(m[1]);
      if (!isGate(value)) problems.push(`${where}: ${value} kB is not a size gate (${gates.join(', ')} kB)`);
    }
  });
  return { problems, gatesSeen };
}

export function docFiles(root: string): string[] {
  const top = readdirSync(root)
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(root, name));
  return [...top, ...walk(join(root, 'docs'), (path) => path.endsWith('.md'), [])];
}

/** All problems of the repository at `root` (empty: tidy). */
export function tidyProblems(root: string): string[] {
  const rel = (path: string): string => relative(root, path);
  const problems: string[] = [];
  const found: LongFunction[] = [];
  for (const file of codeFiles(root)) {
    const text = readFileSync(file, 'utf8');
    found.push(...longFunctionsIn(rel(file), text));
    problems.push(...exportStarsIn(rel(file), text));
  }
  let ratchet = new Map<string, number>();
  try {
    ratchet = parseRatchet(readFileSync(join(root, RATCHET_FILE), 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  problems.push(...checkFunctionLengths(found, ratchet));
  const gates = sizeGates(readFileSync(join(root, '.size-limit.json'), 'utf8'));
  const seen = new Set<number>();
  for (const file of docFiles(root)) {
    const claims = docSizeClaims(rel(file), readFileSync(file, 'utf8'), gates);
    problems.push(...claims.problems);
    for (const gate of claims.gatesSeen) seen.add(gate);
  }
  for (const gate of gates) {
    if (!seen.has(gate))
      problems.push(`.size-limit.json: the ${gate} kB gate is in no docs table with a "gate" column`);
  }
  return problems;
}

export async function tidy(args: string[]): Promise<number> {
  const root = args.find((arg) => !arg.startsWith('--')) ?? process.cwd();
  if (args.includes('--print-long')) {
    const rel = (path: string): string => relative(root, path);
    const all = codeFiles(root).flatMap((f) => longFunctionsIn(rel(f), readFileSync(f, 'utf8')));
    for (const fn of all.sort((a, b) => b.lines - a.lines)) console.log(`${fn.key} ${fn.lines}`);
    return 0;
  }
  const problems = tidyProblems(root);
  for (const problem of problems) console.error(`tidy: ${problem}`);
  if (problems.length === 0) console.log('tidy: ok');
  return problems.length === 0 ? 0 : 1;
}
