/**
 * The repo capsule: a compact, typed map of a repository — its files by role,
 * its detected stack and commands, and the symbols of its source files with
 * line numbers. The codec is the contract for every consumer (the cache on
 * disk is decoded with it; the memory and context side reads it too).
 * Paths are relative to the repository root: no host path is in a capsule.
 */
import * as t from 'io-ts';

export const SymbolKindCodec = t.keyof({
  function: null,
  method: null,
  class: null,
  interface: null,
  type: null,
  enum: null,
  struct: null,
  trait: null,
  constant: null,
  module: null,
  macro: null,
});
export type SymbolKind = t.TypeOf<typeof SymbolKindCodec>;

export const CodeSymbolCodec = t.type({
  name: t.string,
  kind: SymbolKindCodec,
  /** 1-based line of the definition. */
  line: t.number,
  exported: t.boolean,
});
export type CodeSymbol = t.TypeOf<typeof CodeSymbolCodec>;

export const FileRoleCodec = t.keyof({ source: null, test: null, config: null, docs: null, ci: null, other: null });

/** How a file's symbols were found: a grammar, the plain-text fallback, or not at all (and why). */
export const SymbolSourceCodec = t.keyof({
  'tree-sitter': null,
  plain: null,
  none: null,
  'too-large': null,
  binary: null,
  'not-a-file': null,
});

export const CapsuleFileCodec = t.type({
  path: t.string,
  role: FileRoleCodec,
  language: t.union([t.string, t.null]),
  /** The git blob id the entry was built from (the incremental key). */
  blob: t.string,
  lines: t.number,
  symbolSource: SymbolSourceCodec,
  symbols: t.readonlyArray(CodeSymbolCodec),
});
export type CapsuleFile = t.TypeOf<typeof CapsuleFileCodec>;

export const StackEntryCodec = t.type({
  ecosystem: t.keyof({ node: null, python: null, go: null, rust: null, make: null }),
  manifest: t.string,
  tools: t.readonlyArray(t.string),
});

export const RepoCapsuleCodec = t.type({
  version: t.literal(1),
  /** The repository's id under $CRUSTCORE_HOME (the same as the ledger's project directory). */
  repoId: t.string,
  /** The commit checked out when the capsule was built, or null in a repository with no commit. */
  head: t.union([t.string, t.null]),
  /** Files whose work-tree text differs from the git index (the capsule shows their staged text). */
  unstaged: t.number,
  roles: t.type({ source: t.number, test: t.number, config: t.number, docs: t.number, ci: t.number, other: t.number }),
  stack: t.readonlyArray(StackEntryCodec),
  testCommands: t.readonlyArray(t.string),
  buildCommands: t.readonlyArray(t.string),
  files: t.readonlyArray(CapsuleFileCodec),
});
export type RepoCapsule = t.TypeOf<typeof RepoCapsuleCodec>;
