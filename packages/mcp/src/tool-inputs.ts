/**
 * The frozen tool set and each tool's input, twice: a zod shape for the SDK
 * (it publishes the JSON schema and rejects the wrong types) and an io-ts
 * codec that CrustCore decodes with itself, which also enforces the size
 * bounds and says which one was crossed. A change to this set is a breaking
 * change for every IDE configured against it.
 */
import * as t from 'io-ts';
import { z } from 'zod';
import { MCP_LIMITS } from './limits.js';

export const FROZEN_TOOLS = [
  'create_task',
  'stage_diff',
  'verify',
  'status',
  'diff',
  'approve',
  'apply',
  'export',
] as const;
export type ToolName = (typeof FROZEN_TOOLS)[number];

/** A string of at most `maxBytes` UTF-8 bytes (at least `minBytes`), without NUL. */
const bounded = (field: string, maxBytes: number, minBytes = 1) =>
  new t.Type<string, string, unknown>(
    field,
    (u): u is string => typeof u === 'string',
    (u, c) => {
      if (typeof u !== 'string') return t.failure(u, c, `${field} must be a string`);
      const bytes = Buffer.byteLength(u, 'utf8');
      if (bytes > maxBytes) return t.failure(u, c, `${field} is ${bytes} bytes; the limit is ${maxBytes} bytes`);
      if (bytes < minBytes) return t.failure(u, c, `${field} must not be empty`);
      if (u.includes('\u0000')) return t.failure(u, c, `${field} contains a NUL byte`);
      return t.success(u);
    },
    t.identity,
  );

const TaskIdC = new t.Type<string, string, unknown>(
  'task_id',
  (u): u is string => typeof u === 'string',
  (u, c) =>
    typeof u === 'string' && /^t_[0-9A-Za-z-]{1,40}$/.test(u)
      ? t.success(u)
      : t.failure(u, c, 'task_id must be a task id (t_…) returned by create_task'),
  t.identity,
);

const optional = <C extends t.Mixed>(codec: C) => t.union([codec, t.undefined]);

export const ToolInputCodecs = {
  create_task: t.type({
    goal: bounded('goal', MCP_LIMITS.maxGoalBytes),
    dir: optional(bounded('dir', MCP_LIMITS.maxPathBytes)),
    verify_command: optional(bounded('verify_command', MCP_LIMITS.maxCommandBytes)),
  }),
  stage_diff: t.type({
    task_id: TaskIdC,
    diff: bounded('diff', MCP_LIMITS.maxDiffBytes),
    explanation: optional(bounded('explanation', MCP_LIMITS.maxExplanationBytes, 0)),
  }),
  verify: t.type({ task_id: TaskIdC }),
  status: t.type({ task_id: optional(TaskIdC) }),
  diff: t.type({ task_id: TaskIdC }),
  approve: t.type({ task_id: TaskIdC, token: bounded('token', MCP_LIMITS.maxTokenBytes) }),
  apply: t.type({ task_id: TaskIdC }),
  export: t.type({ task_id: TaskIdC }),
} as const satisfies Record<ToolName, t.Mixed>;

export type ToolInput<N extends ToolName> = t.TypeOf<(typeof ToolInputCodecs)[N]>;

const taskId = z.string().describe('The task id returned by create_task (t_…).');

/** Zod shapes handed to the SDK: types only; bounds are CrustCore's to enforce and explain. */
export const ToolShapes = {
  create_task: {
    goal: z.string().describe('What the change should achieve, in one or two sentences.'),
    dir: z
      .string()
      .optional()
      .describe('Repository directory (must be one the server was started for); default: the first one.'),
    verify_command: z
      .string()
      .optional()
      .describe('Test command (argv words, no shell), e.g. "npm test"; default: detected from the project.'),
  },
  stage_diff: {
    task_id: taskId,
    diff: z
      .string()
      .describe(
        'A unified diff (git style) against the task base commit. Each file listed replaces that file’s earlier staged edit.',
      ),
    explanation: z.string().optional().describe('Why, for the reviewer.'),
  },
  verify: { task_id: taskId },
  status: { task_id: taskId.optional() },
  diff: { task_id: taskId },
  approve: {
    task_id: taskId,
    token: z
      .string()
      .describe('The one-time token a person issued with `crustcore mcp-token TASK`. Models cannot create one.'),
  },
  apply: { task_id: taskId },
  export: { task_id: taskId },
} as const satisfies Record<ToolName, Record<string, z.ZodType>>;

export const TOOL_DESCRIPTIONS: Readonly<Record<ToolName, string>> = {
  create_task:
    'Start a task on a repository: records the base commit and the test command. Next: stage_diff. Nothing on disk changes.',
  stage_diff:
    'Stage a unified diff for the task in the state plane (never on disk). Hunks must apply exactly to the base commit. Once verified, the content is frozen: a change after that is a new task.',
  verify:
    'Run the test command in a sandbox on a fresh worktree with the staged content; records a verification run bound to the staged content hash.',
  status: 'Phase, staged files, verification runs and approval state of a task (or the tasks of this server).',
  diff: 'The staged diffs of a task.',
  approve:
    'Approve the verified staged content with a token a person issued (`crustcore mcp-token TASK`). The token is single use and bound to exactly this content.',
  apply: 'Write the approved, verified patch to the working tree atomically (crash-safe journal, drift check).',
  export: 'Return the verified patch (git format) without writing anything.',
};

export function describeToolInputErrors(errors: t.Errors): string {
  const explained = errors.map((error) => error.message).filter((message): message is string => message !== undefined);
  const messages =
    explained.length > 0
      ? explained
      : errors.map(
          (error) =>
            `${
              error.context
                .map((entry) => entry.key)
                .filter(Boolean)
                .join('.') || 'arguments'
            }: invalid`,
        );
  return [...new Set(messages)].slice(0, 5).join('; ');
}
