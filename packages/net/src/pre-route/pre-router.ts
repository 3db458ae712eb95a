/**
 * Pre-router: closed-world classification of an input before any model is
 * asked. It recognises a few structures by their syntax — unified diffs,
 * stack traces (Node/JS, Python, Go, Rust, Java), markdown code fences and
 * their language, JSON, LaTeX maths, SQL statements — and otherwise says
 * `Miss` rather than guess: the caller then does what it would have done
 * without it. Only the first PRE_ROUTE_HEAD_CHARS characters are read, and
 * every pattern is cheap string tests first, then a bounded regex from
 * patterns.ts, so the cost per input has a fixed ceiling.
 */
import {
  DIFF_HEADER,
  DIFF_HUNK,
  FENCE_OPEN,
  GO_FRAME,
  GO_GOROUTINE,
  JAVA_FRAME,
  JSON_OPENING,
  LATEX_ENVIRONMENT,
  LATEX_MATH_BODY,
  NODE_FRAME,
  NODE_FRAME_LOCATION,
  PYTHON_FRAME,
  RUST_PANIC,
} from './patterns.js';
import { sqlStatement } from './sql.js';

/** 8 KiB: the head of an input the pre-router reads; the rest cannot change its answer. */
export const PRE_ROUTE_HEAD_CHARS = 8 * 1024;

export type InputKind = 'diff' | 'stack-trace' | 'code-fence' | 'json' | 'latex' | 'sql';
export type StackLanguage = 'javascript' | 'python' | 'go' | 'rust' | 'java';

export type PreRoute =
  | { readonly _tag: 'Hit'; readonly kind: 'stack-trace'; readonly language: StackLanguage }
  /** `language` is the fence's info word, normalised (`py` → `python`), or null when the fence names none. */
  | { readonly _tag: 'Hit'; readonly kind: 'code-fence'; readonly language: string | null }
  | { readonly _tag: 'Hit'; readonly kind: 'diff' | 'json' | 'latex' | 'sql'; readonly language: null }
  | { readonly _tag: 'Miss' };

const MISS: PreRoute = { _tag: 'Miss' };
const hit = (kind: 'diff' | 'json' | 'latex' | 'sql'): PreRoute => ({ _tag: 'Hit', kind, language: null });

const JVM_SOURCES: ReadonlySet<string> = new Set(['java', 'kt', 'scala', 'groovy']);

function stackTraceLanguage(head: string): StackLanguage | null {
  if (head.includes('Traceback (most recent call last):') && PYTHON_FRAME.test(head)) return 'python';
  if (head.includes("thread '") && head.includes('panicked at') && RUST_PANIC.test(head)) return 'rust';
  if (head.includes('goroutine ') && GO_GOROUTINE.test(head) && GO_FRAME.test(head)) return 'go';
  if (!head.includes('at ')) return null;
  // Java frames end in `(File.java:42)`; checked before Node, whose frames end in `:line:column`.
  const jvm = JAVA_FRAME.exec(head);
  if (jvm !== null && JVM_SOURCES.has(jvm[1] as string)) return 'java';
  const frame = NODE_FRAME.exec(head);
  // "meet at 10:30:45" has the shape of a frame; a real frame names a file, a module or an anonymous function.
  if (frame !== null && NODE_FRAME_LOCATION.test(frame[0])) return 'javascript';
  return null;
}

const FENCE_ALIASES: Readonly<Record<string, string>> = {
  js: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  jsx: 'javascript',
  ts: 'typescript',
  tsx: 'typescript',
  py: 'python',
  python3: 'python',
  rs: 'rust',
  golang: 'go',
  sh: 'shell',
  bash: 'shell',
  zsh: 'shell',
  console: 'shell',
  yml: 'yaml',
  'c++': 'cpp',
  cxx: 'cpp',
  kt: 'kotlin',
  rb: 'ruby',
  psql: 'sql',
  postgresql: 'sql',
};

function fenceLanguage(head: string): string | null | undefined {
  if (!head.includes('```') && !head.includes('~~~')) return undefined;
  const open = FENCE_OPEN.exec(head);
  if (open === null) return undefined;
  const word = open[1]?.toLowerCase();
  if (word === undefined || word === '') return null;
  return Object.hasOwn(FENCE_ALIASES, word) ? (FENCE_ALIASES[word] as string) : word;
}

function isDiff(head: string): boolean {
  if (!head.includes('@@ -')) return false;
  return (
    DIFF_HUNK.test(head) && (DIFF_HEADER.test(head) || head.startsWith('diff --git ') || head.includes('\ndiff --git '))
  );
}

/** Whole JSON only: an input longer than the head cannot be checked, so it is an honest miss. */
function isJson(input: string, head: string): boolean {
  if (input.length > head.length || !JSON_OPENING.test(head)) return false;
  try {
    const value: unknown = JSON.parse(head);
    return typeof value === 'object' && value !== null;
  } catch {
    return false;
  }
}

function delimitedMathHas(head: string, open: string, close: string): boolean {
  const start = head.indexOf(open);
  if (start < 0) return false;
  const end = head.indexOf(close, start + open.length);
  return end > start && LATEX_MATH_BODY.test(head.slice(start + open.length, end));
}

function isLatex(head: string): boolean {
  if (head.includes('\\begin{') && LATEX_ENVIRONMENT.test(head)) return true;
  return delimitedMathHas(head, '$$', '$$') || delimitedMathHas(head, '\\[', '\\]');
}

/** Classifies `input` by its first PRE_ROUTE_HEAD_CHARS characters; `Miss` when it is none of the known kinds. */
export function preRoute(input: string): PreRoute {
  const head = input.length > PRE_ROUTE_HEAD_CHARS ? input.slice(0, PRE_ROUTE_HEAD_CHARS) : input;
  if (isDiff(head)) return hit('diff');
  const stack = stackTraceLanguage(head);
  if (stack !== null) return { _tag: 'Hit', kind: 'stack-trace', language: stack };
  const fence = fenceLanguage(head);
  if (fence !== undefined) return { _tag: 'Hit', kind: 'code-fence', language: fence };
  if (isJson(input, head)) return hit('json');
  if (isLatex(head)) return hit('latex');
  if (sqlStatement(head)) return hit('sql');
  return MISS;
}
