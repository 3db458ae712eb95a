/**
 * Tool arguments as the model sends them are untrusted JSON: each tool's
 * arguments are decoded with io-ts, and a value that does not fit becomes a
 * tool error the model reads and can correct — never an exception.
 */
import * as t from 'io-ts';

// ─── bounds ───────────────────────────────────────────────────────────────

export const ARG_LIMITS = {
  pathChars: 4_096,
  contentChars: 4 * 1024 * 1024,
  patternChars: 1_000,
  argvWords: 64,
  wordChars: 4_096,
  todoItems: 100,
  todoChars: 500,
  taskChars: 8_000,
  roleChars: 64,
} as const;

// ─── refinements ──────────────────────────────────────────────────────────

const bounded = (max: number, name: string) =>
  t.refinement(t.string, (s) => s.length <= max, `${name} (at most ${max} characters)`);

const nonEmpty = (max: number, name: string) =>
  t.refinement(t.string, (s) => s.length > 0 && s.length <= max, `${name} (1 to ${max} characters)`);

const LineNumber = t.refinement(t.number, (n) => Number.isSafeInteger(n) && n >= 1, 'a 1-based line number');
const Count = (max: number) =>
  t.refinement(t.number, (n) => Number.isSafeInteger(n) && n >= 1 && n <= max, `an integer from 1 to ${max}`);

const Path = nonEmpty(ARG_LIMITS.pathChars, 'path');

// ─── codecs ───────────────────────────────────────────────────────────────

export const ReadFileArgs = t.exact(
  t.intersection([t.type({ path: Path }), t.partial({ startLine: LineNumber, endLine: LineNumber })]),
);

export const WriteFileArgs = t.exact(t.type({ path: Path, content: bounded(ARG_LIMITS.contentChars, 'content') }));

export const EditFileArgs = t.exact(
  t.intersection([
    t.type({
      path: Path,
      oldText: nonEmpty(ARG_LIMITS.contentChars, 'oldText'),
      newText: bounded(ARG_LIMITS.contentChars, 'newText'),
      startLine: LineNumber,
    }),
    t.partial({ endLine: LineNumber }),
  ]),
);

const Argv = t.refinement(
  t.array(bounded(ARG_LIMITS.wordChars, 'argv word')),
  (argv) => argv.length >= 1 && argv.length <= ARG_LIMITS.argvWords && (argv[0] ?? '') !== '',
  `argv (1 to ${ARG_LIMITS.argvWords} words, the first a program name)`,
);

export const RunCommandArgs = t.exact(
  // The working directory is recorded as an absolute path: bounded well under the kernel's path bound.
  t.intersection([t.type({ argv: Argv }), t.partial({ cwd: nonEmpty(1_024, 'cwd'), timeoutSeconds: Count(1_800) })]),
);

export const CheckSyntaxArgs = t.exact(t.type({ path: Path }));

export const GlobArgs = t.exact(
  t.intersection([
    t.type({ pattern: nonEmpty(ARG_LIMITS.patternChars, 'pattern') }),
    t.partial({ maxResults: Count(1_000) }),
  ]),
);

export const GrepArgs = t.exact(
  t.intersection([
    t.type({ pattern: nonEmpty(ARG_LIMITS.patternChars, 'pattern') }),
    t.partial({
      path: Path,
      glob: nonEmpty(ARG_LIMITS.patternChars, 'glob'),
      fixedStrings: t.boolean,
      caseInsensitive: t.boolean,
      maxMatches: Count(500),
    }),
  ]),
);

export const TodoStatus = t.keyof({ pending: null, in_progress: null, done: null });
export type TodoStatus = t.TypeOf<typeof TodoStatus>;

export const TodoItem = t.exact(t.type({ text: nonEmpty(ARG_LIMITS.todoChars, 'text'), status: TodoStatus }));
export type TodoItem = t.TypeOf<typeof TodoItem>;

export const TodoReadArgs = t.exact(t.type({}));

export const TodoWriteArgs = t.exact(
  t.type({
    items: t.refinement(
      t.array(TodoItem),
      (items) => items.length <= ARG_LIMITS.todoItems,
      `at most ${ARG_LIMITS.todoItems} items`,
    ),
  }),
);

export const DispatchSubagentArgs = t.exact(
  t.intersection([
    t.type({ task: nonEmpty(ARG_LIMITS.taskChars, 'task') }),
    t.partial({ role: nonEmpty(ARG_LIMITS.roleChars, 'role') }),
  ]),
);

// ─── decoding ─────────────────────────────────────────────────────────────

export type Decoded<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly message: string };

function describePath(context: t.Context): string {
  const keys = context
    .map((entry) => entry.key)
    .filter((key) => key !== '' && !/^\d+$/.test(key))
    .slice(0, 4);
  return keys.length === 0 ? 'arguments' : keys.join('.');
}

/** Decodes `value` with `codec`; the failure message names the first bad fields and what was expected. */
export function decodeArgs<A, O>(codec: t.Type<A, O, unknown>, value: unknown): Decoded<A> {
  const result = codec.decode(value);
  if (result._tag === 'Right') return { ok: true, value: result.right };
  const problems = result.left.slice(0, 3).map((error) => {
    const where = describePath(error.context);
    const expected = error.context[error.context.length - 1]?.type.name ?? 'a valid value';
    return `${where}: expected ${expected}`;
  });
  return { ok: false, message: [...new Set(problems)].join('; ') };
}
