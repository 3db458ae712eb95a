/**
 * Tree-sitter queries, one per grammar: each pattern captures a definition
 * node as `@<kind>` and its name as `@name`. Kinds are the capsule's symbol
 * kinds; whether a definition is exported is decided afterwards from the
 * tree (export statements, visibility modifiers, Go's capital letter,
 * Python's leading underscore), not by the query.
 */
export type GrammarName = 'typescript' | 'tsx' | 'javascript' | 'python' | 'go' | 'rust';

const TS_LIKE = `
(function_declaration name: (identifier) @name) @function
(generator_function_declaration name: (identifier) @name) @function
(class_declaration name: (type_identifier) @name) @class
(abstract_class_declaration name: (type_identifier) @name) @class
(interface_declaration name: (type_identifier) @name) @interface
(type_alias_declaration name: (type_identifier) @name) @type
(enum_declaration name: (identifier) @name) @enum
(method_definition name: (property_identifier) @name) @method
(variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @function
(export_statement declaration: (lexical_declaration (variable_declarator name: (identifier) @name) @constant))
`;

const JAVASCRIPT = `
(function_declaration name: (identifier) @name) @function
(generator_function_declaration name: (identifier) @name) @function
(class_declaration name: (identifier) @name) @class
(method_definition name: (property_identifier) @name) @method
(variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @function
(export_statement declaration: (lexical_declaration (variable_declarator name: (identifier) @name) @constant))
`;

const PYTHON = `
(function_definition name: (identifier) @name) @function
(class_definition name: (identifier) @name) @class
`;

const GO = `
(function_declaration name: (identifier) @name) @function
(method_declaration name: (field_identifier) @name) @method
(type_spec name: (type_identifier) @name type: (struct_type)) @struct
(type_spec name: (type_identifier) @name type: (interface_type)) @interface
(type_spec name: (type_identifier) @name type: [(type_identifier) (qualified_type) (function_type) (map_type) (slice_type) (pointer_type) (channel_type) (array_type) (generic_type)]) @type
`;

const RUST = `
(function_item name: (identifier) @name) @function
(function_signature_item name: (identifier) @name) @function
(struct_item name: (type_identifier) @name) @struct
(enum_item name: (type_identifier) @name) @enum
(trait_item name: (type_identifier) @name) @trait
(type_item name: (type_identifier) @name) @type
(union_item name: (type_identifier) @name) @struct
(const_item name: (identifier) @name) @constant
(static_item name: (identifier) @name) @constant
(mod_item name: (identifier) @name) @module
(macro_definition name: (identifier) @name) @macro
`;

export const QUERIES: Readonly<Record<GrammarName, string>> = {
  typescript: TS_LIKE,
  tsx: TS_LIKE,
  javascript: JAVASCRIPT,
  python: PYTHON,
  go: GO,
  rust: RUST,
};

/** The wasm file of each grammar in @vscode/tree-sitter-wasm. */
export const GRAMMAR_FILES: Readonly<Record<GrammarName, string>> = {
  typescript: 'tree-sitter-typescript.wasm',
  tsx: 'tree-sitter-tsx.wasm',
  javascript: 'tree-sitter-javascript.wasm',
  python: 'tree-sitter-python.wasm',
  go: 'tree-sitter-go.wasm',
  rust: 'tree-sitter-rust.wasm',
};

export const isGrammarName = (language: string | null): language is GrammarName =>
  language !== null && Object.hasOwn(QUERIES, language);
