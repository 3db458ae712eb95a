/**
 * The payload of a queued task job, as stored in the state plane's
 * `crust_jobs.payload`. The database is shared by every daemon (and anyone who
 * can enqueue), so the daemon decodes the payload with io-ts before acting on
 * it: a row that does not decode fails its job with the reason, never the
 * daemon.
 */
import type { Json } from '@crustcore/kernel';
import * as t from 'io-ts';
import { describeDecodeErrors } from './decode-errors.js';

/** Job kind daemons claim; other kinds in the same database are left alone. */
export const TASK_JOB_KIND = 'crustcore.task';

export const TASK_JOB_LIMITS = {
  maxGoalBytes: 8_192,
  maxDirBytes: 4_096,
  maxArgvWords: 256,
  maxWordBytes: 8_192,
  maxRevisits: 20,
  maxTimeoutSeconds: 86_400,
  maxModelBytes: 256,
} as const;

const bounded = (name: string, maxBytes: number, minBytes = 1) =>
  new t.Type<string, string, unknown>(
    name,
    (u): u is string => typeof u === 'string',
    (u, c) => {
      if (typeof u !== 'string') return t.failure(u, c, `${name}: expected a string`);
      const bytes = Buffer.byteLength(u, 'utf8');
      if (bytes < minBytes || bytes > maxBytes)
        return t.failure(u, c, `${name}: expected ${minBytes}..${maxBytes} bytes`);
      if (u.includes('\u0000')) return t.failure(u, c, `${name}: contains a NUL byte`);
      return t.success(u);
    },
    t.identity,
  );

const intIn = (name: string, min: number, max: number) =>
  new t.Type<number, number, unknown>(
    name,
    (u): u is number => typeof u === 'number',
    (u, c) =>
      typeof u === 'number' && Number.isSafeInteger(u) && u >= min && u <= max
        ? t.success(u)
        : t.failure(u, c, `${name}: expected an integer ${min}..${max}`),
    t.identity,
  );

const ArgvC = new t.Type<readonly [string, ...string[]], readonly string[], unknown>(
  'Argv',
  (u): u is readonly [string, ...string[]] => Array.isArray(u) && u.length > 0,
  (u, c) => {
    if (!Array.isArray(u) || u.length === 0 || u.length > TASK_JOB_LIMITS.maxArgvWords) {
      return t.failure(u, c, `argv: expected 1..${TASK_JOB_LIMITS.maxArgvWords} words`);
    }
    for (const word of u) {
      if (typeof word !== 'string' || word.includes('\u0000')) return t.failure(u, c, 'argv: words must be strings');
      if (Buffer.byteLength(word, 'utf8') > TASK_JOB_LIMITS.maxWordBytes) return t.failure(u, c, 'argv: word too long');
    }
    if ((u[0] as string) === '') return t.failure(u, c, 'argv: empty program');
    return t.success(u as unknown as readonly [string, ...string[]]);
  },
  (argv) => argv,
);

export const ApproveModeC = t.keyof({ auto: null, ask: null, deny: null });
export type ApproveMode = t.TypeOf<typeof ApproveModeC>;

/** Backends that live in packs; the daemon loads them as `crustcore run --backend` does. */
export const PackBackendC = t.keyof({ codex: null, claude: null, native: null });
export type PackBackendName = t.TypeOf<typeof PackBackendC>;

const TaskJobFieldsC = t.readonly(
  t.intersection([
    t.type({
      v: t.literal(1),
      /** Absolute, real path of the user's repository (resolved by whoever enqueued). */
      dir: bounded('dir', TASK_JOB_LIMITS.maxDirBytes),
      goal: bounded('goal', TASK_JOB_LIMITS.maxGoalBytes),
      /** Null: detect the project's test command when the job runs. */
      verify: t.union([ArgvC, t.null]),
      /** True when a person typed `verify` (that is the approval of this exact argv). */
      verifyFromUser: t.boolean,
      /** An external command that writes the patch; null when a pack backend does. */
      worker: t.union([ArgvC, t.null]),
      approve: ApproveModeC,
      maxRevisits: intIn('maxRevisits', 0, TASK_JOB_LIMITS.maxRevisits),
      timeoutSeconds: intIn('timeoutSeconds', 1, TASK_JOB_LIMITS.maxTimeoutSeconds),
    }),
    t.partial({
      /** Codex CLI, Claude Code or the native agent instead of `worker`. */
      backend: PackBackendC,
      /** The backend's model (as `crustcore run --model`). */
      model: bounded('model', TASK_JOB_LIMITS.maxModelBytes),
    }),
  ]),
);

/**
 * The stored payload: exactly one of `worker` and `backend` says who writes
 * the patch. Rows written before `backend` existed (always a worker) decode
 * unchanged.
 */
export const TaskJobPayloadC = new t.Type<t.TypeOf<typeof TaskJobFieldsC>, t.OutputOf<typeof TaskJobFieldsC>, unknown>(
  'TaskJobPayload',
  TaskJobFieldsC.is,
  (u, c) => {
    const fields = TaskJobFieldsC.validate(u, c);
    if (fields._tag === 'Left') return fields;
    const { worker, backend, model } = fields.right;
    if ((worker === null) === (backend === undefined))
      return t.failure(
        u,
        c,
        'say who writes the patch: a worker command or a backend (codex, claude, native), not both',
      );
    if (model !== undefined && backend === undefined) return t.failure(u, c, 'model: only a backend takes a model');
    return fields;
  },
  TaskJobFieldsC.encode,
);
export type TaskJobPayload = t.TypeOf<typeof TaskJobPayloadC>;

export interface PayloadProblem {
  readonly _tag: 'BadTaskPayload';
  readonly problems: readonly string[];
}

export function decodeTaskJobPayload(
  value: unknown,
):
  | { readonly _tag: 'Right'; readonly right: TaskJobPayload }
  | { readonly _tag: 'Left'; readonly left: PayloadProblem } {
  const decoded = TaskJobPayloadC.decode(value);
  if (decoded._tag === 'Right') return decoded;
  return { _tag: 'Left', left: { _tag: 'BadTaskPayload', problems: describeDecodeErrors(decoded.left) } };
}

/** The payload as JSON for `enqueueJob` (the codec's output type is already plain JSON). */
export const taskJobPayloadJson = (payload: TaskJobPayload): Json => TaskJobPayloadC.encode(payload) as unknown as Json;

/** What a finished task job records as its result. */
export interface TaskJobResult {
  readonly [key: string]: Json;
  readonly taskId: string;
  readonly outcome: string;
  readonly reason: string;
  readonly attempts: number;
  readonly patchHash: string | null;
  readonly applied: string | null;
  readonly owner: string;
}
