/** Checks a new memory before it reaches SQL; every refusal says how to fix it. */
import { err, ok, type Result } from '@crustcore/kernel';
import { type MemoryInvalid, memoryInvalid } from './errors.js';
import { isMemoryKind, MEMORY_LIMITS, type MemoryKind, type MemorySource, type NewMemory } from './types.js';

export interface CleanMemory {
  readonly kind: MemoryKind;
  readonly body: string;
  readonly fix: string | null;
  readonly tags: readonly string[];
  readonly source: MemorySource;
  readonly taskId: string | null;
}

const TAG = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const TASK_ID = /^t_[0-9A-Za-z-]{1,40}$/;
// Control characters other than tab and newline: invisible in a terminal, and NUL is not storable.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/;

function cleanText(field: string, text: string, max: number): Result<MemoryInvalid, string> {
  const trimmed = text.trim();
  if (trimmed === '') return err(memoryInvalid(field, 'is empty: give the text of the memory'));
  if (trimmed.length > max) return err(memoryInvalid(field, `is ${trimmed.length} characters; keep it to ${max}`));
  if (CONTROL.test(trimmed)) return err(memoryInvalid(field, 'contains control characters; use plain text'));
  return ok(trimmed);
}

export function validateNewMemory(input: NewMemory): Result<MemoryInvalid, CleanMemory> {
  if (!isMemoryKind(input.kind))
    return err(memoryInvalid('kind', 'must be one of failure, convention, decision, nugget'));
  const body = cleanText('body', input.body, MEMORY_LIMITS.bodyChars);
  if (body._tag === 'Left') return body;
  let fix: string | null = null;
  if (input.fix !== undefined && input.fix !== null) {
    const cleaned = cleanText('fix', input.fix, MEMORY_LIMITS.fixChars);
    if (cleaned._tag === 'Left') return cleaned;
    fix = cleaned.right;
  }
  const tags = input.tags ?? [];
  if (tags.length > MEMORY_LIMITS.tags) return err(memoryInvalid('tags', `at most ${MEMORY_LIMITS.tags} tags`));
  const bad = tags.find((tag) => !TAG.test(tag));
  if (bad !== undefined)
    return err(memoryInvalid('tags', `"${bad.slice(0, 40)}" is not a tag (letters, digits, . _ -)`));
  const taskId = input.taskId ?? null;
  if (taskId !== null && !TASK_ID.test(taskId)) return err(memoryInvalid('taskId', 'expected a task id like t_…'));
  return ok({
    kind: input.kind,
    body: body.right,
    fix,
    tags: [...new Set(tags)],
    source: input.source ?? 'person',
    taskId,
  });
}

export function validateRepoId(repoId: string): Result<MemoryInvalid, string> {
  if (repoId.length < 1 || repoId.length > MEMORY_LIMITS.repoIdChars || CONTROL.test(repoId))
    return err(memoryInvalid('repoId', `expected 1..${MEMORY_LIMITS.repoIdChars} printable characters`));
  return ok(repoId);
}
