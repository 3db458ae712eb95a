/**
 * Runs the longest test files first, across all projects. Vitest's default
 * order runs projects one after another (by name) and, on a fresh clone with
 * no results cache, keeps each project's files in discovery order, so the
 * heaviest golden and red-team files started late and ran nearly alone at
 * the end. Durations come from `scripts/test-durations.json`, recorded by a
 * full run (CRUSTCORE_RECORD_DURATIONS=1 npm test); a file it does not know
 * runs first, as if it were the longest (a new file is often a slow one).
 * Only the order changes: which tests run, and what they assert, do not.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export const DURATIONS_FILE = new URL('./test-durations.json', import.meta.url);

/** `project:path relative to the project root`, the key both the sequencer and the recorder use. */
export const durationKey = (projectName: string, projectRoot: string, moduleId: string): string =>
  `${projectName}:${relative(projectRoot, moduleId)}`;

function recordedDurations(): ReadonlyMap<string, number> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(DURATIONS_FILE, 'utf8'));
    if (typeof parsed !== 'object' || parsed === null) return new Map();
    return new Map(Object.entries(parsed).filter((entry): entry is [string, number] => typeof entry[1] === 'number'));
  } catch {
    // No file (or a broken one): every file is unknown, and the order is the discovery order.
    return new Map();
  }
}

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const durations = recordedDurations();
    const estimate = (spec: TestSpecification): number =>
      durations.get(durationKey(spec.project.name, spec.project.config.root, spec.moduleId)) ??
      Number.POSITIVE_INFINITY;
    return [...files].sort((a, b) => estimate(b) - estimate(a) || (a.moduleId < b.moduleId ? -1 : 1));
  }
}
