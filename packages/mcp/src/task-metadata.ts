/**
 * What the server remembers about each task it created: the repository, the
 * base commit, the verify argv and whether a person chose it. The state plane
 * holds the task's phase and staged content; this file holds the host-local
 * facts (a repository path means nothing on another host). One JSON file per
 * task under `<state-dir>/tasks/`, 0600, written to a temp name and renamed,
 * read back through an io-ts codec.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as t from 'io-ts';

const TaskMetadataC = t.type({
  v: t.literal(1),
  taskId: t.string,
  goal: t.string,
  repoRoot: t.string,
  baseCommit: t.string,
  verifyArgv: t.array(t.string),
  verifyFromUser: t.boolean,
  createdAtMs: t.number,
});
export type TaskMetadata = t.TypeOf<typeof TaskMetadataC>;

const TASK_FILE = /^t_[0-9A-Za-z-]{1,40}\.json$/;
const MAX_FILE_BYTES = 64 * 1024;

export class TaskMetadataStore {
  readonly #dir: string;
  readonly #cache = new Map<string, TaskMetadata>();

  constructor(stateDir: string) {
    this.#dir = join(stateDir, 'tasks');
  }

  save(metadata: TaskMetadata): void {
    mkdirSync(this.#dir, { recursive: true, mode: 0o700 });
    const path = join(this.#dir, `${metadata.taskId}.json`);
    const temp = `${path}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify(metadata), { mode: 0o600 });
    renameSync(temp, path);
    this.#cache.set(metadata.taskId, metadata);
  }

  load(taskId: string): TaskMetadata | null {
    const cached = this.#cache.get(taskId);
    if (cached !== undefined) return cached;
    if (!TASK_FILE.test(`${taskId}.json`)) return null;
    const path = join(this.#dir, `${taskId}.json`);
    let text: string;
    try {
      if (statSync(path).size > MAX_FILE_BYTES) return null;
      text = readFileSync(path, 'utf8');
    } catch {
      return null;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return null;
    }
    const decoded = TaskMetadataC.decode(value);
    if (decoded._tag === 'Left' || decoded.right.taskId !== taskId) return null;
    this.#cache.set(taskId, decoded.right);
    return decoded.right;
  }

  /** Newest first, at most `limit`. */
  list(limit: number): readonly TaskMetadata[] {
    let names: string[];
    try {
      names = readdirSync(this.#dir).filter((name) => TASK_FILE.test(name));
    } catch {
      return [];
    }
    const found: TaskMetadata[] = [];
    for (const name of names.slice(0, 10_000)) {
      const metadata = this.load(name.slice(0, -'.json'.length));
      if (metadata !== null) found.push(metadata);
    }
    return found.sort((a, b) => b.createdAtMs - a.createdAtMs).slice(0, limit);
  }
}
