/**
 * A small JSON Schema → TypeScript type mapper for code mode's stubs: objects (required and
 * optional properties), arrays, enums and constants, unions, primitives. Anything else — `$ref`,
 * tuples, conditionals, a schema nested too deep or too wide — is `unknown`: the stub is a hint to
 * the model, not a validator (the server checks its arguments, and the gateway bounds them).
 *
 * Property names and enum values come from the server: they are emitted as JSON string literals
 * when they are not plain identifiers, so no name can break out of the type it sits in.
 */

type Schema = Readonly<Record<string, unknown>>;

/** Deeper than this the type is `unknown` (a recursive-looking schema stays short). */
const MAX_DEPTH = 6;
/** Properties, enum values or union members per level; past this the rest is left out or widened. */
const MAX_MEMBERS = 32;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A JSON value as a TypeScript literal type, or null when it is not a primitive. */
function literal(value: unknown): string | null {
  if (typeof value === 'string' || typeof value === 'boolean' || value === null) return JSON.stringify(value);
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

function union(parts: readonly string[]): string {
  const unique = [...new Set(parts)];
  if (unique.length === 0 || unique.includes('unknown')) return 'unknown';
  return unique.join(' | ');
}

function enumType(values: readonly unknown[]): string {
  const literals = values.slice(0, MAX_MEMBERS).map(literal);
  if (literals.some((part) => part === null)) return 'unknown';
  if (values.length <= MAX_MEMBERS) return union(literals as string[]);
  // Too many to list: the primitive types they share.
  return union(values.map((value) => (value === null ? 'null' : typeof value)));
}

const propertyKey = (key: string): string => (IDENTIFIER.test(key) ? key : JSON.stringify(key));

function objectType(schema: Schema, depth: number): string {
  const properties = isSchema(schema.properties) ? Object.entries(schema.properties) : [];
  const required = new Set(
    Array.isArray(schema.required) ? schema.required.filter((key) => typeof key === 'string') : [],
  );
  const members = properties
    .slice(0, MAX_MEMBERS)
    .map(([key, value]) => `${propertyKey(key)}${required.has(key) ? '' : '?'}: ${schemaType(value, depth + 1)}`);
  const extra = schema.additionalProperties;
  if (members.length === 0)
    return `Record<string, ${isSchema(extra) ? schemaType(extra, depth + 1) : extra === false ? 'never' : 'unknown'}>`;
  if (properties.length > MAX_MEMBERS || extra === true || isSchema(extra)) members.push('[key: string]: unknown');
  return `{ ${members.join('; ')} }`;
}

function arrayType(items: unknown, depth: number): string {
  const inner = isSchema(items) ? schemaType(items, depth + 1) : 'unknown';
  return inner.includes(' | ') ? `(${inner})[]` : `${inner}[]`;
}

function namedType(type: unknown, schema: Schema, depth: number): string {
  switch (type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return arrayType(schema.items, depth);
    case 'object':
      return objectType(schema, depth);
    default:
      return 'unknown';
  }
}

/** The TypeScript type a JSON Schema describes, as far as this mapper knows; `unknown` otherwise. */
export function schemaType(schema: unknown, depth = 0): string {
  if (!isSchema(schema) || depth > MAX_DEPTH) return 'unknown';
  if (Array.isArray(schema.enum)) return enumType(schema.enum);
  if (Object.hasOwn(schema, 'const')) return literal(schema.const) ?? 'unknown';
  const variants = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : null;
  if (variants !== null) return union(variants.slice(0, MAX_MEMBERS).map((variant) => schemaType(variant, depth + 1)));
  if (Array.isArray(schema.type)) return union(schema.type.map((type) => namedType(type, schema, depth)));
  if (typeof schema.type === 'string') return namedType(schema.type, schema, depth);
  if (isSchema(schema.properties)) return objectType(schema, depth);
  return 'unknown';
}
